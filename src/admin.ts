// `npm run admin -- <command>`: operator commands that run against the configured stores.
// With embedded stores, stop the API first: its DATA_DIR belongs to one process at a time.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { bootStores } from './service.ts';

interface Command {
  usage: string;
  summary: string;
  run(args: string[], ctx: { config: Config; logger: Logger; out: (line: string) => void }): Promise<void>;
}

export class UsageError extends Error {}

const commands: Record<string, Command> = {
  migrate: {
    usage: 'migrate',
    summary: 'apply pending PostgreSQL and ClickHouse migrations and exit (the API also does this at boot)',
    async run(_args, { config, logger, out }) {
      const stores = await bootStores(config, logger);
      await stores.close();
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
