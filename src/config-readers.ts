// Readers of the environment's variables for the config (config.ts): each parses one variable, or
// one group of variables that only make sense together, and names the variable in the error when
// its value is wrong. They read the `env` they are given, never process.env.
import type { Config } from './config.ts';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

export function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got ${raw}`);
  return n;
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return def;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(
      name,
      `must be a URL with scheme ${protocols.map((p) => p.replace(':', '')).join(' or ')}, got ${parsed.protocol.replace(':', '')}`,
    );
  }
  return raw;
}

export function identifier(env: Env, name: string, def: string | undefined): string | undefined {
  const raw = str(env, name) ?? def;
  if (raw !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(raw)) {
    throw new ConfigError(name, `must be a plain identifier (letters, digits, underscore), got "${raw}"`);
  }
  return raw;
}

/** CLICKHOUSE_TOPOLOGY; `cluster` when only CLICKHOUSE_CLUSTER is set (as before the setting existed). */
export function clickhouseTopology(
  env: Env,
  cluster: string | undefined,
  clickhouseUrl: string | undefined,
): Config['clickhouse']['topology'] {
  const raw = str(env, 'CLICKHOUSE_TOPOLOGY');
  const topology = raw ?? (cluster ? 'cluster' : 'single');
  if (topology !== 'single' && topology !== 'cluster' && topology !== 'cloud')
    throw new ConfigError('CLICKHOUSE_TOPOLOGY', `must be one of single, cluster, cloud, got "${raw}"`);
  if (topology === 'cluster' && !cluster)
    throw new ConfigError('CLICKHOUSE_CLUSTER', 'must name the cluster when CLICKHOUSE_TOPOLOGY=cluster');
  if (topology !== 'cluster' && cluster)
    throw new ConfigError('CLICKHOUSE_CLUSTER', `is for CLICKHOUSE_TOPOLOGY=cluster, not ${topology}: ON CLUSTER is wrong there`);
  if (topology !== 'single' && !clickhouseUrl)
    throw new ConfigError('CLICKHOUSE_TOPOLOGY', `${topology} needs CLICKHOUSE_URL: the embedded engine is a single node`);
  return topology;
}

/** TRACELOOM_INIT_*: the project id is needed by the other two; the key has the generated keys' form. */
export function initProject(env: Env): Config['init'] {
  const projectId = str(env, 'TRACELOOM_INIT_PROJECT_ID');
  const projectName = str(env, 'TRACELOOM_INIT_PROJECT_NAME');
  const apiKey = str(env, 'TRACELOOM_INIT_API_KEY');
  if (!projectId) {
    if (projectName) throw new ConfigError('TRACELOOM_INIT_PROJECT_ID', 'must be set when TRACELOOM_INIT_PROJECT_NAME is set');
    if (apiKey) throw new ConfigError('TRACELOOM_INIT_PROJECT_ID', 'must be set when TRACELOOM_INIT_API_KEY is set');
    return undefined;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(projectId)) {
    throw new ConfigError(
      'TRACELOOM_INIT_PROJECT_ID',
      'must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
  }
  if (projectName !== undefined && projectName.length > 200)
    throw new ConfigError('TRACELOOM_INIT_PROJECT_NAME', 'must be at most 200 characters');
  // The value is never echoed: it is a secret.
  if (apiKey !== undefined && !/^tl_[0-9A-Za-z]{40}$/.test(apiKey)) {
    throw new ConfigError(
      'TRACELOOM_INIT_API_KEY',
      'must be "tl_" followed by 40 letters and digits (e.g. tl_$(head -c 1000 /dev/urandom | tr -dc A-Za-z0-9 | head -c 40))',
    );
  }
  return { projectId, projectName, apiKey };
}

/** SECRETS_KEY: 32 bytes as 64 hex digits or base64. The value is never echoed: it is a secret. */
export function secretsKey(env: Env): Buffer | undefined {
  const raw = str(env, 'SECRETS_KEY');
  if (raw === undefined) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(raw) && !/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)))
    throw new ConfigError('SECRETS_KEY', 'must be 32 bytes as 64 hex digits or base64 (e.g. $(openssl rand -hex 32))');
  return key;
}

/** EXPORT_S3_*: all of endpoint, bucket and keys, or none. The secret is never echoed. */
export function exportS3(env: Env): Config['exports']['s3'] {
  const endpoint = url(env, 'EXPORT_S3_ENDPOINT', ['http:', 'https:']);
  const bucket = str(env, 'EXPORT_S3_BUCKET');
  const accessKeyId = str(env, 'EXPORT_S3_ACCESS_KEY_ID');
  const secretAccessKey = str(env, 'EXPORT_S3_SECRET_ACCESS_KEY');
  const given = {
    EXPORT_S3_ENDPOINT: endpoint,
    EXPORT_S3_BUCKET: bucket,
    EXPORT_S3_ACCESS_KEY_ID: accessKeyId,
    EXPORT_S3_SECRET_ACCESS_KEY: secretAccessKey,
  };
  if (Object.values(given).every((v) => v === undefined)) return undefined;
  for (const [name, v] of Object.entries(given))
    if (v === undefined) throw new ConfigError(name, 'must be set with the other EXPORT_S3_* variables');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket!))
    throw new ConfigError('EXPORT_S3_BUCKET', 'must be a bucket name (3 to 63 lowercase letters, digits, "." or "-")');
  const prefix = str(env, 'EXPORT_S3_PREFIX') ?? '';
  if (prefix.startsWith('/')) throw new ConfigError('EXPORT_S3_PREFIX', 'must not start with "/"');
  return {
    endpoint: endpoint!,
    bucket: bucket!,
    region: str(env, 'EXPORT_S3_REGION') ?? 'us-east-1',
    accessKeyId: accessKeyId!,
    secretAccessKey: secretAccessKey!,
    prefix,
  };
}
