// JWTs from the customer's identity provider, verified with jose against the provider's JWKS.
// One remote key set per issuer, created at boot (its cache and cooldown only work if reused);
// asymmetric algorithms only (no alg confusion with HMAC); 30 s clock tolerance; `sub` and `exp`
// required. A provider that cannot be reached is a 503, not a 401: an outage is not a bad token.
import crypto from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import { unavailable } from '../errors.ts';
import { highestRole, PROJECT_ID, ROLES, type Role } from './principal.ts';

export const MAX_TOKEN_BYTES = 8 * 1024;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const TOKEN_CACHE_MS = 60_000;
const TOKEN_CACHE_MAX = 50_000;

export interface VerifiedToken {
  sub: string;
  projects: Map<string, Role>;
  /** The first project named by the token. */
  defaultProject: string | null;
  role: Role;
  expMs: number;
}

export type TokenVerification = { ok: true; token: VerifiedToken } | { ok: false; reason: string };

export interface JwtVerifier {
  verify(token: string): Promise<TokenVerification>;
}

function claimStrings(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  return undefined;
}

/** Role claim: a role name or a list of them (the highest counts); absent → member; unknown → viewer (least privilege). */
function roleFrom(payload: JWTPayload, claim: string): Role {
  const raw = payload[claim];
  if (raw === undefined) return 'member';
  const known = (claimStrings(raw) ?? []).filter((r): r is Role => (ROLES as readonly string[]).includes(r));
  return highestRole(known) ?? 'viewer';
}

function isProviderOutage(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  // A fetch that failed (connection refused, DNS) or a non-200 answer from the JWKS URL.
  if (!(err instanceof errors.JOSEError)) return true;
  return err.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/i.test(err.message);
}

export function createJwtVerifier(config: Config): JwtVerifier | undefined {
  const idp = config.idp;
  if (!idp.jwksUrl || !idp.jwtIssuer) return undefined;
  const jwks = createRemoteJWKSet(new URL(idp.jwksUrl), {
    timeoutDuration: 5_000,
    cooldownDuration: idp.jwksCooldownMs,
    cacheMaxAge: 10 * 60_000,
  });
  const cache = new Map<string, VerifiedToken>();

  return {
    async verify(token: string): Promise<TokenVerification> {
      if (token.length > MAX_TOKEN_BYTES) return { ok: false, reason: 'token over 8 KB' };
      const cacheKey = crypto.createHash('sha256').update(token).digest('hex');
      const now = Date.now();
      const hit = cache.get(cacheKey);
      if (hit && hit.expMs > now) return { ok: true, token: hit };
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer: idp.jwtIssuer,
          audience: idp.jwtAudience,
          algorithms: ALGORITHMS,
          clockTolerance: 30,
          requiredClaims: ['sub', 'exp'],
        }));
      } catch (err) {
        if (isProviderOutage(err)) throw unavailable('The identity provider keys (JWKS) cannot be fetched; retry later');
        return { ok: false, reason: err instanceof errors.JOSEError ? err.code : 'invalid token' };
      }
      if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 256)
        return { ok: false, reason: 'sub is not a string' };
      const role = roleFrom(payload, idp.roleClaim);
      const named = claimStrings(payload[idp.projectClaim]) ?? [];
      const projectIds = named.filter((p) => PROJECT_ID.test(p));
      const projects = new Map(projectIds.map((p) => [p, role] as const));
      const verified: VerifiedToken = {
        sub: payload.sub,
        projects,
        defaultProject: projectIds[0] ?? null,
        role,
        // Cached until min(exp, 60 s): a token never outlives its expiry here.
        expMs: Math.min((payload.exp as number) * 1000, now + TOKEN_CACHE_MS),
      };
      if (cache.size >= TOKEN_CACHE_MAX) cache.delete(cache.keys().next().value as string);
      cache.set(cacheKey, verified);
      return { ok: true, token: verified };
    },
  };
}
