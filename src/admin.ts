// `npm run admin -- <command>`: operator commands. When the API runs on the embedded stores (it
// holds DATA_DIR), they go through its admin socket; otherwise they open the configured stores
// themselves. Same commands, same output either way. stdout carries only a command's result (a
// key, a table), so `KEY=$(npm run -s admin -- create-key ...)` works; the rest goes to stderr.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { DomainError, Invalid } from './errors.ts';
import { HttpError } from './http/errors.ts';
import { PROJECT_ID, ROLES, type Role } from './auth/principal.ts';
import { DataDirLock, dataDirLockFile } from './stores/data-dir-lock.ts';
import { adminSocketPath } from './http/admin-socket.ts';
import type { Operator } from './admin/operator.ts';
import { socketOperator } from './admin/socket-operator.ts';

interface Context {
  operator: Operator;
  /** A line of the result, on stdout. */
  out: (line: string) => void;
  /** A line for the person at the terminal, on stderr. */
  note: (line: string) => void;
}

interface Command {
  usage: string;
  summary: string;
  /** Checks the arguments (UsageError) before any store or socket is opened; returns the work. */
  prepare(args: string[]): (ctx: Context) => Promise<void>;
}

export class UsageError extends Error {}

/** `--name value` options; anything else is a usage error. */
function parseOptions(args: string[], allowed: Record<string, 'value'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m || !allowed[m[1]!]) throw new UsageError(`unknown argument "${a}"`);
    const value = m[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${m[1]} needs a value`);
    out[m[1]!] = value;
  }
  return out;
}

function projectOption(opts: Record<string, string>): string {
  const project = opts.project;
  if (!project) throw new UsageError('--project is required');
  if (!PROJECT_ID.test(project)) throw new UsageError(`--project: "${project}" is not a valid project id`);
  return project;
}

function nameOption(opts: Record<string, string>, max: number, required: boolean): string | undefined {
  const name = opts.name;
  if (name === undefined && !required) return undefined;
  if (!name || name.length > max) throw new UsageError(`--name is required (1 to ${max} characters)`);
  return name;
}

const commands: Record<string, Command> = {
  'create-project': {
    usage: 'create-project --project <id> [--name <name>]',
    summary: 'create a project; prints its id',
    prepare(args) {
      const opts = parseOptions(args, { project: 'value', name: 'value' });
      const projectId = projectOption(opts);
      const name = nameOption(opts, 200, false) ?? projectId;
      return async ({ operator, out, note }) => {
        const p = await operator.createProject(projectId, name);
        note(`created project ${p.project_id} ("${p.name}")`);
        out(p.project_id);
      };
    },
  },
  'list-projects': {
    usage: 'list-projects',
    summary: 'list every project: id, name, created_at',
    prepare(args) {
      parseOptions(args, {});
      return async ({ operator, out }) => {
        for (const p of await operator.listProjects()) out([p.project_id, p.name, p.created_at].join('\t'));
      };
    },
  },
  'create-key': {
    usage: 'create-key --project <id> --name <name> [--role admin|member|viewer] [--scope full|ingest] [--expires-in-days N]',
    summary: 'create an API key (and the project if absent); prints only the key, once',
    prepare(args) {
      const opts = parseOptions(args, { project: 'value', name: 'value', 'expires-in-days': 'value', scope: 'value', role: 'value' });
      const projectId = projectOption(opts);
      const name = nameOption(opts, 100, true)!;
      const days = opts['expires-in-days'] === undefined ? 90 : Number(opts['expires-in-days']);
      if (!Number.isInteger(days) || days < 1 || days > 3650)
        throw new UsageError('--expires-in-days must be an integer between 1 and 3650');
      const scope = opts.scope ?? 'full';
      if (scope !== 'full' && scope !== 'ingest') throw new UsageError('--scope must be full or ingest');
      const role = (opts.role ?? 'member') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be ${ROLES.join(', ')}`);
      return async ({ operator, out, note }) => {
        const { key, view: p } = await operator.createKey({ projectId, name, expiresInDays: days, scope, role });
        note(`created key ${p.key_id} (${p.prefix}…, role ${p.role}, scope ${p.scope}) for project ${projectId}, expires ${p.expires_at}`);
        note('The key is shown once; store it now:');
        out(key);
      };
    },
  },
  'list-keys': {
    usage: 'list-keys --project <id>',
    summary: "list a project's API keys (never the secrets): id, prefix, role, scope, status, expires_at, name",
    prepare(args) {
      const projectId = projectOption(parseOptions(args, { project: 'value' }));
      return async ({ operator, out }) => {
        for (const p of await operator.listKeys(projectId))
          out([p.key_id, p.prefix, p.role, p.scope, p.status, p.expires_at, p.name].join('\t'));
      };
    },
  },
  'revoke-key': {
    usage: 'revoke-key --project <id> --key-id <uuid>',
    summary: 'revoke an API key; it fails on its next use, on every API node',
    prepare(args) {
      const opts = parseOptions(args, { project: 'value', 'key-id': 'value' });
      const projectId = projectOption(opts);
      const keyId = opts['key-id'];
      if (!keyId) throw new UsageError('--key-id is required');
      return async ({ operator, out }) => {
        if (!(await operator.revokeKey(projectId, keyId))) throw new Error(`no API key ${keyId} in project ${projectId}`);
        out(`revoked ${keyId}`);
      };
    },
  },
  migrate: {
    usage: 'migrate',
    summary: 'apply pending PostgreSQL and ClickHouse migrations and exit (the API also does this at boot)',
    prepare(args) {
      parseOptions(args, {});
      // Opening the stores applied them; a running API applied them when it started.
      return async ({ operator, out }) =>
        out(operator.via === 'stores' ? 'migrations applied' : 'migrations applied (by the running API, at its start)');
    },
  },
};

function usage(): string {
  return [
    'usage: npm run admin -- <command> [options]',
    '',
    'commands:',
    ...Object.values(commands).map((c) => `  ${c.usage}\n      ${c.summary}`),
  ].join('\n');
}

/** How long a command waits for an API that is still starting (it holds DATA_DIR before it serves). */
const START_WAIT_MS = 120_000;

/** Through the running API when it holds DATA_DIR (embedded stores), else on the stores. */
async function openOperator(config: Config, logger: Logger, note: (line: string) => void): Promise<Operator> {
  const socketPath = adminSocketPath(config.dataDir);
  const deadline = Date.now() + START_WAIT_MS;
  for (let waiting = false; ; waiting = true) {
    const holder = DataDirLock.holder(dataDirLockFile(config.dataDir));
    // The stores' modules (engines included) load only when they are used: through the socket, a
    // command starts in a fraction of the time.
    if (holder === undefined) return (await import('./admin/operator.ts')).storesOperator(config, logger);
    try {
      const operator = await socketOperator(socketPath);
      note(`the API (process ${holder}) holds ${config.dataDir}: working through its admin socket`);
      return operator;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Not listening yet: the API is starting (or another command holds the stores for a moment).
      if ((code !== 'ENOENT' && code !== 'ECONNREFUSED') || Date.now() > deadline) {
        throw new Error(
          `process ${holder} holds ${config.dataDir}, and nothing answers on its admin socket ${socketPath}: ${(err as Error).message}`,
        );
      }
      if (!waiting) note(`process ${holder} holds ${config.dataDir}: waiting for its admin socket…`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`invalid configuration: ${err.message}\n`);
      return 78;
    }
    throw err;
  }
  // Logs go to stderr so that stdout carries only the command's output (a key, a table).
  const logger = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, process.stderr as never);
  const note = (line: string) => process.stderr.write(`${line}\n`);
  let operator: Operator | undefined;
  try {
    const work = command.prepare(args);
    operator = await openOperator(config, logger, note);
    await work({ operator, out: (line) => process.stdout.write(`${line}\n`), note });
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${command.usage}\n`);
      return 2;
    }
    process.stderr.write(`failed: ${err instanceof DomainError || err instanceof HttpError ? err.detail : (err as Error).message}\n`);
    // Input the command could not read (400 from the API): a usage error.
    return err instanceof Invalid && err.reason === 'malformed' ? 2 : 1;
  } finally {
    await operator?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
