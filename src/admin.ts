// `npm run admin -- <command>`: operator commands that run against the configured stores.
// With embedded stores, stop the API first: its DATA_DIR belongs to one process at a time.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { bootStores } from './service.ts';
import { createApiKey, listApiKeys, presentKey, revokeApiKey } from './auth/api-keys.ts';
import { ensureProject } from './auth/projects.ts';
import { PROJECT_ID } from './auth/principal.ts';
import { createKeyVerifier } from './auth/key-verifier.ts';
import type { Stores } from './stores/index.ts';
import { createBroadcast } from './stores/broadcast.ts';

interface Command {
  usage: string;
  summary: string;
  run(args: string[], ctx: { config: Config; logger: Logger; out: (line: string) => void }): Promise<void>;
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

async function withStores<T>(config: Config, logger: Logger, fn: (stores: Stores) => Promise<T>): Promise<T> {
  const stores = await bootStores(config, logger);
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

const commands: Record<string, Command> = {
  'create-key': {
    usage: 'create-key --project <id> --name <name> [--expires-in-days N] [--scope full|ingest]',
    summary: 'create an API key (and the project if absent); prints the key once',
    async run(args, { config, logger, out }) {
      const opts = parseOptions(args, { project: 'value', name: 'value', 'expires-in-days': 'value', scope: 'value' });
      const projectId = projectOption(opts);
      const name = opts.name;
      if (!name || name.length > 100) throw new UsageError('--name is required (1 to 100 characters)');
      const days = opts['expires-in-days'] === undefined ? 90 : Number(opts['expires-in-days']);
      if (!Number.isInteger(days) || days < 1 || days > 3650) throw new UsageError('--expires-in-days must be an integer between 1 and 3650');
      const scope = opts.scope ?? 'full';
      if (scope !== 'full' && scope !== 'ingest') throw new UsageError('--scope must be full or ingest');
      const created = await withStores(config, logger, async (stores) => {
        await ensureProject(stores.postgres, projectId);
        return createApiKey(stores.postgres, { projectId, name, expiresInDays: days, scope, createdBy: 'admin-cli' });
      });
      const p = presentKey(created.row);
      process.stderr.write(`created key ${p.key_id} (${p.prefix}…, scope ${p.scope}) for project ${projectId}, expires ${p.expires_at}\nThe key is shown once; store it now:\n`);
      out(created.key);
    },
  },
  'list-keys': {
    usage: 'list-keys --project <id>',
    summary: "list a project's API keys (never the secrets)",
    async run(args, { config, logger, out }) {
      const projectId = projectOption(parseOptions(args, { project: 'value' }));
      const rows = await withStores(config, logger, (stores) => listApiKeys(stores.postgres, projectId));
      for (const p of rows.map(presentKey)) out([p.key_id, p.prefix, p.scope, p.status, p.expires_at, p.name].join('\t'));
    },
  },
  'revoke-key': {
    usage: 'revoke-key --project <id> --key-id <uuid>',
    summary: 'revoke an API key; it fails on its next use (other API nodes: within 5 s)',
    async run(args, { config, logger, out }) {
      const opts = parseOptions(args, { project: 'value', 'key-id': 'value' });
      const projectId = projectOption(opts);
      if (!opts['key-id']) throw new UsageError('--key-id is required');
      await withStores(config, logger, async (stores) => {
        const keyHash = await revokeApiKey(stores.postgres, projectId, opts['key-id']!);
        if (!keyHash) throw new Error(`no API key ${opts['key-id']} in project ${projectId}`);
        // Tell running API nodes (with Redis) to drop it from their caches now.
        const broadcast = createBroadcast(stores.redis, logger);
        const verifier = createKeyVerifier(stores.postgres, broadcast, logger);
        await verifier.evict(keyHash);
        await verifier.close();
        broadcast.close();
      });
      out(`revoked ${opts['key-id']}`);
    },
  },
  migrate: {
    usage: 'migrate',
    summary: 'apply pending PostgreSQL and ClickHouse migrations and exit (the API also does this at boot)',
    async run(_args, { config, logger, out }) {
      await withStores(config, logger, async () => undefined);
      out('migrations applied');
    },
  },
};

function usage(): string {
  return ['usage: npm run admin -- <command> [options]', '', 'commands:', ...Object.values(commands).map((c) => `  ${c.usage.padEnd(40)} ${c.summary}`)].join('\n');
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
  try {
    await command.run(args, { config, logger, out: (line) => process.stdout.write(`${line}\n`) });
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof UsageError ? `${err.message}\n${command.usage}` : `failed: ${(err as Error).message}`}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
