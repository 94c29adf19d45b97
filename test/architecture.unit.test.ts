// The module rules of docs/architecture.md, checked on the source text:
// - each table's SQL lives in one src folder, in its repositories (files named `*-repository.ts`,
//   one per reader or writer): the tables are read from the migrations in schema/, and a file
//   "holds a table's SQL" when, outside comments, it names the table after FROM, INTO, UPDATE,
//   JOIN or TABLE. The migrations (schema/*.sql, run by src/stores/migrate.ts) are DDL and
//   exempt: they are not under src/ and name every table;
// - no loop between domain folders: their imports form an order (reads/ is the neutral folder
//   of read shapes that executions/ and scores/ both answer);
// - executions/ never imports ingest/ (ingest depends on executions, not the reverse);
// - domain modules never import http/ (only the edges and the composition do);
// - no import runs up the layers (foundation < stores < jobs < domain < edges): stores never
//   import a domain, nothing below the edges imports them;
// - nothing under src/ imports a path outside src/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');

function filesUnder(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(full, ext) : ext.test(e.name) ? [full] : [];
  });
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');
const sources = filesUnder(SRC, /\.tsx?$/).map((file) => ({ file: rel(file), text: fs.readFileSync(file, 'utf8') }));

/** The text without comments (block comments, and line comments that start a line or follow code after a space). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}

/** Every table and view the migrations create. */
function schemaTables(): string[] {
  const names = new Set<string>();
  for (const file of filesUnder(path.join(ROOT, 'schema'), /\.sql$/)) {
    for (const m of fs
      .readFileSync(file, 'utf8')
      .matchAll(/CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) {
      names.add(m[1]!.toLowerCase());
    }
  }
  return [...names].sort();
}

/** Relative import specifiers of a file, resolved to repository paths. */
function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of code(text).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g)) {
    out.push(rel(path.resolve(ROOT, path.dirname(file), m[1]!)));
  }
  return out;
}

describe('architecture', () => {
  const tables = schemaTables();

  it('reads the table list from the migrations', () => {
    expect(tables).toEqual(
      expect.arrayContaining(['spans', 'executions', 'execution_traces', 'daily_spend', 'budgets', 'budget_alerts', 'prompts', 'api_keys']),
    );
  });

  it("each table's SQL is in one src folder, in files named *-repository.ts", () => {
    const owners = new Map<string, string[]>();
    for (const table of tables) {
      const sql = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+(?:ONLY\\s+)?${table}\\b`);
      owners.set(
        table,
        sources.filter((s) => sql.test(code(s.text))).map((s) => s.file),
      );
    }
    const folder = (file: string) => path.posix.dirname(file);
    const spread = [...owners]
      .filter(([, files]) => new Set(files.map(folder)).size > 1)
      .map(([table, files]) => `${table}: ${files.join(', ')}`);
    expect(spread).toEqual([]);
    const misnamed = [...new Set([...owners.values()].flat())].filter((f) => !f.endsWith('-repository.ts'));
    expect(misnamed).toEqual([]);
    // The check sees SQL where it is (a scan that finds nothing would pass for the wrong reason).
    expect(owners.get('spans')).toEqual(['src/executions/span-repository.ts']);
    expect(owners.get('executions')).toEqual(
      expect.arrayContaining(['src/executions/execution-listing-repository.ts', 'src/executions/reprice-ledger-repository.ts']),
    );
    expect(owners.get('spend_by_dims')).toEqual(['src/spend/daily-spend-repository.ts']);
  });

  it('no loop between domain folders: their imports form an order', () => {
    const domainFolder = (file: string) => {
      const m = /^src\/([^/]+)\//.exec(file);
      return m && !['http', 'grpc', 'admin', 'stores', 'jobs', 'compose'].includes(m[1]!) ? m[1]! : undefined;
    };
    const edges = new Map<string, Set<string>>();
    for (const s of sources) {
      const from = domainFolder(s.file);
      if (!from) continue;
      for (const i of importsOf(s.file, s.text)) {
        const to = domainFolder(i);
        if (to && to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    // A folder is in a loop when it reaches itself through another.
    const reaches = (a: string, b: string, seen = new Set<string>()): boolean =>
      [...(edges.get(a) ?? [])].some((n) => n === b || (!seen.has(n) && (seen.add(n), reaches(n, b, seen))));
    const loops = [...edges.keys()].filter((f) => reaches(f, f)).sort();
    expect(loops).toEqual([]);
    // The check sees the folders (scores/ answers reads of executions/, not the reverse).
    expect(edges.get('scores')?.has('executions')).toBe(true);
    expect(edges.get('executions')?.has('scores') ?? false).toBe(false);
  });

  it('executions/ never imports ingest/', () => {
    const wrong = sources
      .filter((s) => s.file.startsWith('src/executions/'))
      .flatMap((s) =>
        importsOf(s.file, s.text)
          .filter((i) => i.startsWith('src/ingest/'))
          .map((i) => `${s.file} → ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it('domain modules never import http/ (only the edges, the boot and the composition root do)', () => {
    // The edges: http/ itself, grpc/ (maps errors through http/errors.ts), the admin CLI (talks
    // HTTP to the admin socket); the boot and composition: main.ts, service.ts, compose/.
    const allowed = (file: string) =>
      file.startsWith('src/http/') ||
      file.startsWith('src/grpc/') ||
      file.startsWith('src/admin') ||
      file.startsWith('src/compose/') ||
      ['src/main.ts', 'src/service.ts'].includes(file);
    const wrong = sources
      .filter((s) => !allowed(s.file))
      .flatMap((s) =>
        importsOf(s.file, s.text)
          .filter((i) => i.startsWith('src/http/'))
          .map((i) => `${s.file} → ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it('no import runs up the layers: foundation, stores, jobs, domain, edges (stores never import a domain)', () => {
    // Each layer may import its own and the ones below, never one above: the shared foundation
    // (config, errors, logging, time, decimal money, metrics) under the stores, the stores under the
    // job runner, those under the domain modules, and the edges and the composition on top.
    const EDGES = [
      'src/http/',
      'src/grpc/',
      'src/admin/',
      'src/admin.ts',
      'src/compose/',
      'src/main.ts',
      'src/service.ts',
      'src/worker.ts',
    ];
    const layerOf = (file: string): number => {
      if (EDGES.some((e) => file === e || (e.endsWith('/') && file.startsWith(e)))) return 4;
      if (file.startsWith('src/stores/')) return 1;
      if (file.startsWith('src/jobs/')) return 2;
      if (/^src\/[^/]+$/.test(file)) return 0;
      return 3;
    };
    const NAMES = ['foundation', 'stores', 'jobs', 'domain', 'edges'];
    const wrong = sources.flatMap((s) =>
      importsOf(s.file, s.text)
        .filter((i) => i.startsWith('src/') && layerOf(i) > layerOf(s.file))
        .map((i) => `${s.file} (${NAMES[layerOf(s.file)]}) → ${i} (${NAMES[layerOf(i)]})`),
    );
    expect(wrong).toEqual([]);
    // The check sees the layers (a rule that classifies nothing would pass for the wrong reason).
    expect(
      ['src/decimal.ts', 'src/stores/row-binary.ts', 'src/jobs/runner.ts', 'src/spend/budgets.ts', 'src/compose/domain.ts'].map(layerOf),
    ).toEqual([0, 1, 2, 3, 4]);
  });

  it('exports live in src/exports/ and composition holds no table settings', () => {
    expect(sources.filter((s) => /^src\/executions\/.*(export|s3-put)/.test(s.file)).map((s) => s.file)).toEqual([]);
    const compose = sources.filter((s) => s.file.startsWith('src/compose/'));
    expect(compose.map((s) => s.file)).toContain('src/compose/domain.ts');
    for (const s of compose) expect(code(s.text), s.file).not.toMatch(/insertRowBinary|insert_deduplication_token|prompts\.version\(/);
  });

  it('the composition is one root, in src/compose/: no domain folder wires itself (an index.ts of a domain)', () => {
    const domainIndexes = sources.filter((s) => /^src\/(?!http\/|grpc\/|admin\/|stores\/|jobs\/|compose\/)[^/]+\/index\.ts$/.test(s.file));
    expect(domainIndexes.map((s) => s.file)).toEqual([]);
  });

  it('nothing under src/ imports a path outside src/', () => {
    const wrong = sources.flatMap((s) =>
      importsOf(s.file, s.text)
        .filter((i) => !i.startsWith('src/'))
        .map((i) => `${s.file} → ${i}`),
    );
    expect(wrong).toEqual([]);
  });
});
