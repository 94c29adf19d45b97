// A real identity provider for tests: a JWKS endpoint on loopback and token signing with jose.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

export class TestIdp {
  readonly issuer = 'https://idp.test.traceloom/';
  readonly audience = 'traceloom-api';
  keys: SigningKey[] = [];
  fetches = 0;
  private server?: http.Server;
  port = 0;

  get jwksUrl(): string {
    return `http://127.0.0.1:${this.port}/.well-known/jwks.json`;
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    return { IDP_JWT_ISSUER: this.issuer, IDP_JWKS_URL: this.jwksUrl, IDP_JWT_AUDIENCE: this.audience, ...extra };
  }

  async start(): Promise<this> {
    if (this.keys.length === 0) this.keys.push(await newSigningKey('k1'));
    this.server = http.createServer((req, res) => {
      if (req.url !== '/.well-known/jwks.json') {
        res.writeHead(404).end();
        return;
      }
      this.fetches++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ keys: this.keys.map((k) => k.jwk) }));
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
    this.server = undefined;
  }

  /** A valid token for `sub`, with overrides of any claim and of the signing key. */
  async token(
    claims: JWTPayload & Record<string, unknown> = {},
    opts: { key?: SigningKey; kid?: string; issuer?: string; audience?: string; expSeconds?: number } = {},
  ): Promise<string> {
    const key = opts.key ?? this.keys[0]!;
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      sub: 'user-1',
      iat: now,
      exp: now + (opts.expSeconds ?? 600),
      iss: opts.issuer ?? this.issuer,
      aud: opts.audience ?? this.audience,
      ...claims,
    };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid }).sign(key.privateKey);
  }
}
