// Prompt management: versions (gap-free, assigned under the prompt's row lock), labels, rollback,
// rendering and diffs. No Koa here: plain arguments in, plain objects or errors out.
import { conflict, notFound, unprocessable, badRequest } from '../errors.ts';
import type { PostgresStore, Queryable } from '../stores/postgres.ts';
import type { PromptCache } from './cache.ts';
import { diffLines, unified, type DiffLine } from './diff.ts';
import * as gateRepo from './label-gate-repository.ts';
import * as repo from './prompt-repository.ts';
import { presentPrompt, presentVersion } from './present.ts';
import {
  checkConfig,
  checkLabelName,
  checkLabels,
  checkTemplate,
  refKey,
  type CreatePromptInput,
  type NewVersionInput,
  type VersionRef,
} from './prompt-input.ts';
import {
  canonicalJson,
  contentHash,
  extractVariables,
  isPlaceholder,
  placeholderProblem,
  render,
  type PlaceholderFill,
  type Template,
} from './template.ts';

/** Who changes something, as the label events record it. */
export interface Actor {
  /** the principal id: JWT `sub`, `api_key:<key_id>`, `dev` or `operator` */
  userId: string;
  /** the API key the caller authenticated with; null for JWT, dev and operator callers */
  apiKeyId: string | null;
}

/**
 * A release gate's answer for one move of a protected label (release-gates/label-gates.ts),
 * evaluated before the move's transaction: the move happens only if, under the prompt's lock, the
 * label still holds `fromVersion` and the gate is still the one evaluated (`gateUpdatedAt`).
 */
export interface GateDecision {
  gateUpdatedAt: Date;
  fromVersion: number | null;
  passed: boolean;
  /** set when an admin moves the label past a failing gate */
  override?: { reason: string };
  /** what the event records: the conditions and their figures */
  details: unknown;
}

export const protectedDetail = (label: string) =>
  `Label ${label} is protected by a release gate: it moves only with PUT …/labels/${label} once the gate passes (or an admin's override)`;

/** Checks made before a prompt is rendered (the budget in block mode answers 402). */
export interface RenderGuard {
  beforeRender(projectId: string): Promise<void>;
}

/** A template rendered with every variable and placeholder it names filled; 422 naming those missing. */
export function renderWhole(template: Template, inputs: Record<string, unknown>, placeholders: PlaceholderFill) {
  const r = render(template, inputs, placeholders);
  const missing = [
    ...(r.missing.length > 0 ? [`Missing variables: ${r.missing.join(', ')}`] : []),
    ...(r.missingPlaceholders.length > 0 ? [`Missing placeholders: ${r.missingPlaceholders.join(', ')}`] : []),
  ];
  if (missing.length > 0) throw unprocessable(missing.join('; '));
  return r;
}

export function createPromptService(db: PostgresStore, cache: PromptCache, guard?: RenderGuard) {
  async function lockPrompt(tx: Queryable, projectId: string, promptId: string, forWrite: boolean): Promise<repo.PromptRow> {
    const p = await repo.findPrompt(tx, projectId, promptId, true);
    if (!p) throw notFound('Prompt');
    if (forWrite && p.archived_at) throw conflict(`Prompt ${promptId} is archived: it takes no new versions or labels`);
    return p;
  }

  async function resolve(tx: Queryable, projectId: string, promptId: string, ref: VersionRef, latest?: number): Promise<number> {
    if (ref.kind === 'number') return ref.version;
    if (ref.kind === 'latest') {
      if (latest !== undefined) return latest;
      const p = await repo.findPrompt(tx, projectId, promptId);
      if (!p) throw notFound('Prompt');
      return p.latest_version;
    }
    const v = await repo.findLabel(tx, projectId, promptId, ref.label);
    if (v === undefined) throw notFound(`Label ${ref.label}`, 'label');
    return v;
  }

  /** Appends a version unless its content equals the latest; moves the given labels onto the result. */
  async function append(
    tx: Queryable,
    projectId: string,
    p: repo.PromptRow,
    content: { template: Template; config: Record<string, unknown> },
    meta: { commitMessage: string | null; rolledBackFrom: number | null; labels: string[]; actor: Actor },
  ): Promise<{ created: boolean; version: number }> {
    checkTemplate(p.type, content.template);
    // A version just written has no evidence of its own: a protected label never comes with it.
    const gated = await gateRepo.protectedLabels(tx, projectId, p.prompt_id, meta.labels);
    if (gated.length > 0) throw conflict(`labels: ${gated.map(protectedDetail).join('; ')}`);
    const hash = contentHash(content.template, content.config);
    let version = p.latest_version;
    let created = false;
    const latest = version > 0 ? await repo.findVersion(tx, projectId, p.prompt_id, version) : undefined;
    if (!latest || latest.content_hash !== hash) {
      version = p.latest_version + 1;
      created = true;
      await repo.insertVersion(tx, projectId, p.prompt_id, {
        version,
        template: content.template,
        variables: extractVariables(content.template),
        config: content.config,
        contentHash: hash,
        commitMessage: meta.commitMessage,
        rolledBackFrom: meta.rolledBackFrom,
        createdBy: meta.actor.userId,
      });
    }
    for (const label of meta.labels)
      await moveLabel(tx, projectId, p.prompt_id, label, version, { actor: meta.actor, reason: meta.commitMessage, action: 'moved' });
    return { created, version };
  }

  /** Points a label at a version and records the move (none when it is there already). */
  async function moveLabel(
    tx: Queryable,
    projectId: string,
    promptId: string,
    label: string,
    version: number,
    how: { actor: Actor; reason: string | null; action: 'moved' | 'overridden'; details?: unknown },
  ): Promise<void> {
    const from = await repo.findLabel(tx, projectId, promptId, label);
    if (from === version) return;
    await repo.upsertLabel(tx, projectId, promptId, label, version);
    await gateRepo.insertEvent(tx, projectId, promptId, {
      label,
      action: how.action,
      fromVersion: from ?? null,
      toVersion: version,
      actor: how.actor.userId,
      apiKeyId: how.actor.apiKeyId,
      reason: how.reason,
      details: how.details ?? null,
    });
  }

  async function readVersion(projectId: string, promptId: string, ref: VersionRef): Promise<repo.VersionRow> {
    const key = refKey(ref);
    const hit = cache.get(projectId, promptId, key);
    if (hit) return hit;
    const generation = cache.generation(projectId, promptId);
    const version = await resolve(db, projectId, promptId, ref);
    const row = await repo.findVersion(db, projectId, promptId, version);
    if (!row) {
      if (!(await repo.findPrompt(db, projectId, promptId))) throw notFound('Prompt');
      throw notFound(`Version ${version}`, 'version');
    }
    cache.set(projectId, promptId, key, row, generation);
    return row;
  }

  return {
    async create(projectId: string, input: CreatePromptInput, actor: Actor) {
      const labels = checkLabels(input.labels);
      checkTemplate(input.type, input.template);
      checkConfig(input.config);
      await db.transaction(async (tx) => {
        const inserted = await repo.insertPrompt(tx, {
          projectId,
          promptId: input.prompt_id,
          type: input.type,
          description: input.description ?? null,
          createdBy: actor.userId,
        });
        if (!inserted) throw conflict(`Prompt ${input.prompt_id} already exists (an archived prompt keeps its id)`);
        const p = (await repo.findPrompt(tx, projectId, input.prompt_id, true))!;
        await append(
          tx,
          projectId,
          p,
          { template: input.template, config: input.config ?? {} },
          { commitMessage: input.commit_message ?? null, rolledBackFrom: null, labels, actor },
        );
      });
      await cache.invalidate(projectId, input.prompt_id);
      return this.get(projectId, input.prompt_id);
    },

    async get(projectId: string, promptId: string) {
      const p = await repo.findPrompt(db, projectId, promptId);
      if (!p) throw notFound('Prompt');
      const latest = await readVersion(projectId, promptId, { kind: 'latest' });
      return { ...presentPrompt(p), latest: presentVersion(latest) };
    },

    async list(projectId: string, q: { q?: string; include_archived: boolean; limit: number; offset: number }) {
      const { items, total } = await repo.listPrompts(db, projectId, {
        search: q.q,
        includeArchived: q.include_archived,
        limit: q.limit,
        offset: q.offset,
      });
      return { items: items.map(presentPrompt), total, limit: q.limit, offset: q.offset };
    },

    async addVersion(projectId: string, promptId: string, input: NewVersionInput, actor: Actor) {
      const labels = checkLabels(input.labels);
      checkConfig(input.config);
      const result = await db.transaction(async (tx) => {
        const p = await lockPrompt(tx, projectId, promptId, true);
        // An omitted config keeps the latest version's: editing the text does not reset the model parameters.
        const config = input.config ?? (await repo.findVersion(tx, projectId, promptId, p.latest_version))?.config ?? {};
        return append(
          tx,
          projectId,
          p,
          { template: input.template, config },
          { commitMessage: input.commit_message ?? null, rolledBackFrom: null, labels, actor },
        );
      });
      await cache.invalidate(projectId, promptId);
      return {
        created: result.created,
        version: presentVersion(await readVersion(projectId, promptId, { kind: 'number', version: result.version })),
      };
    },

    async versions(projectId: string, promptId: string) {
      if (!(await repo.findPrompt(db, projectId, promptId))) throw notFound('Prompt');
      const rows = await repo.listVersions(db, projectId, promptId);
      return {
        items: rows.map((v) => ({
          version: v.version,
          created_at: v.created_at.toISOString(),
          created_by: v.created_by,
          commit_message: v.commit_message,
          labels: v.labels,
          rolled_back_from: v.rolled_back_from,
        })),
      };
    },

    async version(projectId: string, promptId: string, ref: VersionRef) {
      return presentVersion(await readVersion(projectId, promptId, ref));
    },

    async rollback(
      projectId: string,
      promptId: string,
      ref: VersionRef,
      opts: { commitMessage?: string; labels?: string[] },
      actor: Actor,
    ) {
      const labels = checkLabels(opts.labels);
      const version = await db.transaction(async (tx) => {
        const p = await lockPrompt(tx, projectId, promptId, true);
        const target = await resolve(tx, projectId, promptId, ref, p.latest_version);
        const row = await repo.findVersion(tx, projectId, promptId, target);
        if (!row) throw notFound(`Version ${target}`, 'version');
        if (target === p.latest_version) throw conflict(`Version ${target} is already the latest`);
        const latest = (await repo.findVersion(tx, projectId, promptId, p.latest_version))!;
        if (latest.content_hash === row.content_hash)
          throw conflict(`The latest version ${p.latest_version} already has the content of version ${target}`);
        const r = await append(
          tx,
          projectId,
          p,
          { template: row.template, config: row.config },
          { commitMessage: opts.commitMessage ?? `Rollback to version ${target}`, rolledBackFrom: target, labels, actor },
        );
        return r.version;
      });
      await cache.invalidate(projectId, promptId);
      return presentVersion(await readVersion(projectId, promptId, { kind: 'number', version }));
    },

    /** 400 for a label name that cannot be one, 404 for no prompt, 422 for no such version. */
    async checkLabelTarget(projectId: string, promptId: string, label: string, version: number, tx: Queryable = db) {
      checkLabelName(label);
      if (!(await repo.findVersion(tx, projectId, promptId, version))) {
        if (!(await repo.findPrompt(tx, projectId, promptId))) throw notFound('Prompt');
        throw unprocessable(`version: ${version} does not exist for prompt ${promptId}`);
      }
    },

    /**
     * Points a label at a version. A protected label moves only with its gate's decision, and
     * only if nothing changed since the gate was evaluated; every move is recorded.
     */
    async setLabel(
      projectId: string,
      promptId: string,
      label: string,
      version: number,
      move: { actor: Actor; reason?: string; decision?: GateDecision },
    ) {
      checkLabelName(label);
      await db.transaction(async (tx) => {
        await lockPrompt(tx, projectId, promptId, true);
        await this.checkLabelTarget(projectId, promptId, label, version, tx);
        const gate = await gateRepo.findGate(tx, projectId, promptId, label);
        const d = move.decision;
        if (gate) {
          if (!d) throw conflict(protectedDetail(label));
          const from = (await repo.findLabel(tx, projectId, promptId, label)) ?? null;
          if (d.gateUpdatedAt.getTime() !== gate.updated_at.getTime() || d.fromVersion !== from)
            throw conflict(`Label ${label} or its gate changed while the gate was evaluated: try again`);
          if (!d.passed && !d.override) throw conflict(protectedDetail(label));
        } else if (d) throw conflict(`Label ${label} lost its gate while it was evaluated: try again`);
        await moveLabel(tx, projectId, promptId, label, version, {
          actor: move.actor,
          reason: d?.override?.reason ?? move.reason ?? null,
          action: d?.override && !d.passed ? 'overridden' : 'moved',
          details: d?.details,
        });
      });
      await cache.invalidate(projectId, promptId);
      return { prompt_id: promptId, label, version };
    },

    async deleteLabel(projectId: string, promptId: string, label: string, actor: Actor) {
      if (label === 'latest') throw badRequest('label: "latest" is reserved and cannot be removed');
      const removed = await db.transaction(async (tx) => {
        await lockPrompt(tx, projectId, promptId, false);
        // Removing it would let the next move skip the comparison with the version it held.
        if (await gateRepo.findGate(tx, projectId, promptId, label))
          throw conflict(`Label ${label} is protected by a release gate: an admin removes the gate first (DELETE …/labels/${label}/gate)`);
        const from = await repo.findLabel(tx, projectId, promptId, label);
        if (from === undefined) return false;
        await repo.deleteLabel(tx, projectId, promptId, label);
        await gateRepo.insertEvent(tx, projectId, promptId, {
          label,
          action: 'removed',
          fromVersion: from,
          toVersion: null,
          actor: actor.userId,
          apiKeyId: actor.apiKeyId,
          reason: null,
          details: null,
        });
        return true;
      });
      if (!removed) throw notFound(`Label ${label}`, 'label');
      await cache.invalidate(projectId, promptId);
    },

    async archive(projectId: string, promptId: string) {
      if (!(await repo.archivePrompt(db, projectId, promptId))) throw notFound('Prompt');
      await cache.invalidate(projectId, promptId);
    },

    async render(
      projectId: string,
      promptId: string,
      ref: VersionRef,
      inputs: Record<string, unknown>,
      placeholders: PlaceholderFill = {},
    ) {
      const problem = placeholderProblem(placeholders);
      if (problem) throw badRequest(problem);
      await guard?.beforeRender(projectId);
      const v = await readVersion(projectId, promptId, ref);
      const r = renderWhole(v.template, inputs, placeholders);
      return {
        prompt_id: promptId,
        version: v.version,
        type: v.type,
        ...(r.text !== undefined ? { text: r.text } : { messages: r.messages }),
        config: v.config,
        unused_inputs: r.unusedInputs,
        unused_placeholders: r.unusedPlaceholders,
      };
    },

    async diff(projectId: string, promptId: string, a: VersionRef, b: VersionRef) {
      const [va, vb] = [await readVersion(projectId, promptId, a), await readVersion(projectId, promptId, b)];
      const lines = (t: Template) =>
        typeof t === 'string'
          ? t.split('\n')
          : t.flatMap((m) => (isPlaceholder(m) ? [`[placeholder: ${m.name}]`] : [`[${m.role}]`, ...m.content.split('\n')]));
      const configLines = (c: Record<string, unknown>) => JSON.stringify(JSON.parse(canonicalJson(c)), null, 2).split('\n');
      const section = (d: DiffLine[]) => ({ changed: d.some((l) => l.op !== 'equal'), lines: d, unified: unified(d) });
      const content = section(diffLines(lines(va.template), lines(vb.template)));
      const config = section(diffLines(configLines(va.config), configLines(vb.config)));
      return { prompt_id: promptId, from: va.version, to: vb.version, changed: content.changed || config.changed, content, config };
    },
  };
}

export type PromptService = ReturnType<typeof createPromptService>;
