// Who is calling, and what they may do. Roles (docs/identity.md): viewer reads; member also writes
// prompts, executions and spans; admin also manages API keys and the budget. The operator (a
// request on the local admin socket) is admin of every project and alone may create projects.
import { badRequest, forbidden } from '../errors.ts';

export type Role = 'admin' | 'member' | 'viewer';
export type Need = 'read' | 'write' | 'admin';
export type KeyScope = 'full' | 'ingest';

export const ROLES: readonly Role[] = ['admin', 'member', 'viewer'];

export interface Principal {
  /** JWT `sub`, `dev` without authentication, `api_key:<key_id>`, or `operator`. */
  userId: string;
  authMethod: 'api_key' | 'jwt' | 'none' | 'operator';
  /** The project the caller acts in by default (null when a token names none). */
  projectId: string | null;
  /** Role in the default project. */
  role: Role;
  /** Every project the caller may act in, with the role there. */
  projects: ReadonlyMap<string, Role>;
  keyId?: string;
  keyScope?: KeyScope;
}

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };
const NEED: Record<Need, number> = { read: 0, write: 1, admin: 2 };

export function allows(role: Role, need: Need): boolean {
  return RANK[role] >= NEED[need];
}

export function highestRole(roles: readonly Role[]): Role | undefined {
  return roles.reduce<Role | undefined>((best, r) => (best === undefined || RANK[r] > RANK[best] ? r : best), undefined);
}

/** The caller's role in a project: the operator is admin of every project. */
export function roleIn(p: Principal, projectId: string): Role | undefined {
  return p.authMethod === 'operator' ? 'admin' : p.projects.get(projectId);
}

export const OPERATOR: Principal = { userId: 'operator', authMethod: 'operator', projectId: null, role: 'admin', projects: new Map() };

export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The project an ingest request (OTLP over HTTP or gRPC) writes to: the one `asked` names
 * (X-Project-Id / x-project-id), else the caller's own; 400 when none can be chosen, 403 when the
 * caller may not write there. An ingest-scope key may ingest: it is what an agent ships with.
 */
export function ingestProjectOf(p: Principal, asked: string | undefined): string {
  const projectId = asked || p.projectId;
  if (!projectId) throw badRequest('X-Project-Id: the credential names several projects or none; say which project the data belongs to');
  const role = roleIn(p, projectId);
  if (!role || !allows(role, 'write')) throw forbidden();
  return projectId;
}

/** The API key a caller authenticated with, recorded on what it sends; '' for JWT, dev and operator callers. */
export function apiKeyIdOf(p: Principal | undefined): string {
  return p?.authMethod === 'api_key' ? (p.keyId ?? '') : '';
}
