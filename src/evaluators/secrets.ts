// Sealing of model connections' API keys at rest (docs/evaluators.md, "Secrets"): AES-256-GCM
// with a random 96-bit IV per value, stored as base64(iv ‖ tag ‖ ciphertext). The key comes from
// SECRETS_KEY; with embedded stores and no SECRETS_KEY, one is made once into
// DATA_DIR/secrets.key (mode 0600), next to the data it protects — a copy of DATA_DIR then holds
// both, which is the embedded mode's trade-off (set SECRETS_KEY to keep them apart). With server
// stores there is no such file: several nodes must share one key, so it must be given.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { conflict } from '../errors.ts';

export interface SecretBox {
  /** Whether a key is available (server stores without SECRETS_KEY: no). */
  readonly ready: boolean;
  seal(plain: string): string;
  /** The plain text, or an Error naming why it cannot be read (never the text). */
  open(sealed: string): string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function keyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, 'secrets.key');
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
  if (key.length !== 32) throw new Error(`${file}: is not a 32-byte key (64 hex digits)`);
  return key;
}

export function createSecretBox(key: Buffer | undefined): SecretBox {
  return {
    ready: key !== undefined,
    seal(plain) {
      if (!key) throw conflict('api_key: connections cannot be stored: SECRETS_KEY is not configured on this server (docs/evaluators.md)');
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed) {
      if (!key) throw new Error('SECRETS_KEY is not configured: the API key cannot be read');
      const raw = Buffer.from(sealed, 'base64');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('the API key cannot be opened with the current SECRETS_KEY (was the key changed?)');
      }
    },
  };
}
