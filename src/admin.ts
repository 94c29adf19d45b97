// `npm run admin -- <command>`: operator commands that run against the configured stores.
// With embedded stores, stop the API first: its DATA_DIR belongs to one process at a time.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { bootStores } from './service.ts';
import { ensureProject } from './auth/projects.ts';
import { PROJECT_ID, ROLES, type Role } from './auth/principal.ts';
import { createKeyVerifier } from './auth/key-verifier.ts';
import { createApiKeyService, type ApiKeyService } from './auth/key-service.ts';
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

/** The stores, and the key service the routes use (its revocations reach running API nodes through Redis). */
async function withStores<T>(config: Config, logger: Logger, fn: (stores: Stores, keys: ApiKeyService) => Promise<T>): Promise<T> {
  const stores = await bootStores(config, logger);
  const broadcast = createBroadcast(stores.redis, logger);
  const verifier = createKeyVerifier(stores.postgres, broadcast, logger);
  try {
    return await fn(stores, createApiKeyService(stores.postgres, verifier));
  } finally {
    await verifier.close();
    broadcast.close();
    await stores.close();
  }
}

const commands: Record<string, Command> = {
  'create-key': {
    usage: 'create-key --project <id> --name <name> [--role admin|member|viewer] [--scope full|ingest] [--expires-in-days N]',
    summary: 'create an API key (and the project if absent); prints the key once',
    async run(args, { config, logger, out }) {
      const opts = parseOptions(args, { project: 'value', name: 'value', 'expires-in-days': 'value', scope: 'value', role: 'value' });
      const projectId = projectOption(opts);
      const name = opts.name;
      if (!name || name.length > 100) throw new UsageError('--name is required (1 to 100 characters)');
      const days = opts['expires-in-days'] === undefined ? 90 : Number(opts['expires-in-days']);
      if (!Number.isInteger(days) || days < 1 || days > 3650) throw new UsageError('--expires-in-days must be an integer between 1 and 3650');
      const scope = opts.scope ?? 'full';
      if (scope !== 'full' && scope !== 'ingest') throw new UsageError('--scope must be full or ingest');
      const role = (opts.role ?? 'member') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be ${ROLES.join(', ')}`);
      const { key, view: p } = await withStores(config, logger, async (stores, keys) => {
        await ensureProject(stores.postgres, projectId);
        return keys.create({ projectId, name, expiresInDays: days, scope, role, createdBy: 'admin-cli' });
      });
      process.stderr.write(`created key ${p.key_id} (${p.prefix}…, role ${p.role}, scope ${p.scope}) for project ${projectId}, expires ${p.expires_at}\nThe key is shown once; store it now:\n`);
      out(key);
    },
  },
  'list-keys': {
    usage: 'list-keys --project <id>',
    summary: "list a project's API keys (never the secrets)",
    async run(args, { config, logger, out }) {
      const projectId = projectOption(parseOptions(args, { project: 'value' }));
      const keys = await withStores(config, logger, (_stores, service) => service.list(projectId));
      for (const p of keys) out([p.key_id, p.prefix, p.role, p.scope, p.status, p.expires_at, p.name].join('\t'));
    },
  },
  'revoke-key': {
    usage: 'revoke-key --project <id> --key-id <uuid>',
    summary: 'revoke an API key; it fails on its next use (other API nodes: within 5 s)',
    async run(args, { config, logger, out }) {
      const opts = parseOptions(args, { project: 'value', 'key-id': 'value' });
      const projectId = projectOption(opts);
      if (!opts['key-id']) throw new UsageError('--key-id is required');
      await withStores(config, logger, async (_stores, keys) => {
        if (!(await keys.revoke(projectId, opts['key-id']!))) throw new Error(`no API key ${opts['key-id']} in project ${projectId}`);
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
