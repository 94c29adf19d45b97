// Release gates on prompt labels (docs/prompts.md, "Release gates"): the config of a protected
// (prompt, label), the check of a candidate version against the version the label holds (dataset
// runs as evidence, compared by datasets/run-compare.ts), approvals, the gated move with its
// override, and the label events. No Koa here: plain arguments in, plain objects or errors out.
import type { Role } from '../auth/principal.ts';
import { cursor } from '../datasets/datasets.ts';
import type { RunComparison } from '../datasets/run-compare.ts';
import type { RunRepository, RunRow } from '../datasets/run-repository.ts';
import { badRequest, conflict, Forbidden, notFound, unprocessable } from '../errors.ts';
import * as gateRepo from '../prompts/label-gate-repository.ts';
import type { GateConfig, GateRow } from '../prompts/label-gate-repository.ts';
import * as promptRepo from '../prompts/prompt-repository.ts';
import { checkLabelName } from '../prompts/prompt-input.ts';
import type { Actor, PromptService } from '../prompts/service.ts';
import type { PostgresStore, Queryable } from '../stores/postgres.ts';
import { comparedConditions, costCondition, passes, refusal, scoreCondition, type Condition, type RunRef } from './gate-check.ts';

export interface GateInput {
  dataset_id: string;
  scores?: string[];
  lower_is_better?: string[];
  alpha?: number;
  max_cost_increase_pct?: number | null;
  require_approval?: boolean;
}

export interface LabelMoveInput {
  version: number;
  reason?: string;
  override?: boolean;
  gate_run_id?: string;
}

export interface LabelGateDeps {
  db: PostgresStore;
  prompts: PromptService;
  /** 404 unless the dataset is the project's */
  dataset(projectId: string, datasetId: string): Promise<unknown>;
  runs: Pick<RunRepository, 'latestWithPrompt'>;
  measure: RunComparison['measure'];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function presentGate(promptId: string, g: GateRow) {
  return {
    prompt_id: promptId,
    label: g.label,
    dataset_id: g.dataset_id,
    scores: g.scores,
    lower_is_better: g.lower_is_better,
    alpha: g.alpha,
    max_cost_increase_pct: g.max_cost_increase_pct,
    require_approval: g.require_approval,
    updated_by: g.updated_by,
    created_at: g.created_at.toISOString(),
    updated_at: g.updated_at.toISOString(),
  };
}

const presentRunRef = (r: RunRow | undefined) => (r ? { run_id: r.run_id, name: r.name, created_at: r.created_at.toISOString() } : null);

export function createLabelGates(deps: LabelGateDeps) {
  const { db } = deps;

  async function gateOf(projectId: string, promptId: string, label: string): Promise<GateRow> {
    checkLabelName(label);
    const gate = await gateRepo.findGate(db, projectId, promptId, label);
    if (gate) return gate;
    if (!(await promptRepo.findPrompt(db, projectId, promptId))) throw notFound('Prompt');
    throw notFound(`Gate of label ${label}`, 'gate');
  }

  /** Under the prompt's lock: changes a gate (undefined: nothing changed) and records the change. */
  async function changeGate<T>(
    projectId: string,
    promptId: string,
    label: string,
    actor: Actor,
    action: 'gate_set' | 'gate_removed',
    change: (tx: Queryable) => Promise<{ result: T; details: unknown } | undefined>,
  ): Promise<T | undefined> {
    return db.transaction(async (tx) => {
      if (!(await promptRepo.findPrompt(tx, projectId, promptId, true))) throw notFound('Prompt');
      const done = await change(tx);
      if (!done) return undefined;
      const held = (await promptRepo.findLabel(tx, projectId, promptId, label)) ?? null;
      await gateRepo.insertEvent(tx, projectId, promptId, {
        label,
        action,
        fromVersion: held,
        toVersion: held,
        actor: actor.userId,
        apiKeyId: actor.apiKeyId,
        reason: null,
        details: done.details,
      });
      return done.result;
    });
  }

  /** Every condition of the gate for moving `label` to `version`, with the figures. */
  async function evaluate(projectId: string, promptId: string, label: string, gate: GateRow, version: number, runId?: string) {
    const current = (await promptRepo.findLabel(db, projectId, promptId, label)) ?? null;
    const conditions: Condition[] = [];
    const candidateRun = await deps.runs.latestWithPrompt(projectId, gate.dataset_id, { prompt_id: promptId, version }, runId);
    const named = runId ? `run ${runId} of dataset ${gate.dataset_id} naming` : `no run of dataset ${gate.dataset_id} names`;
    conditions.push(
      candidateRun
        ? {
            condition: 'evidence_candidate',
            status: 'passed',
            detail: `run "${candidateRun.name}" (${candidateRun.run_id}) names version ${version}`,
          }
        : {
            condition: 'evidence_candidate',
            status: 'failed',
            detail: runId
              ? `gate_run_id: no ${named} prompt ${promptId} version ${version}`
              : `${named} prompt ${promptId} version ${version}`,
          },
    );
    let currentRun: RunRow | undefined;
    if (current === null) {
      conditions.push({
        condition: 'evidence_current',
        status: 'not_applicable',
        detail: `label ${label} points at no version: the candidate needs evidence of its own only`,
      });
      conditions.push(...comparedConditions(gate, 'not_applicable', `nothing to compare with: label ${label} points at no version`));
    } else {
      currentRun = await deps.runs.latestWithPrompt(projectId, gate.dataset_id, { prompt_id: promptId, version: current });
      if (!currentRun)
        conditions.push({
          condition: 'evidence_current',
          status: 'failed',
          detail: `no run of dataset ${gate.dataset_id} names prompt ${promptId} version ${current} (the version label ${label} holds)`,
        });
      else if (candidateRun && currentRun.run_id === candidateRun.run_id)
        conditions.push({
          condition: 'evidence_current',
          status: 'failed',
          detail: `run "${currentRun.name}" (${currentRun.run_id}) names both versions ${current} and ${version}: the gate compares a run of each`,
        });
      else
        conditions.push({
          condition: 'evidence_current',
          status: 'passed',
          detail: `run "${currentRun.name}" (${currentRun.run_id}) names version ${current}`,
        });
      if (conditions.some((c) => c.status !== 'passed'))
        conditions.push(...comparedConditions(gate, 'not_evaluated', 'not evaluated without a run of each version'));
      else {
        const runs: { current: RunRef; candidate: RunRef } = { current: currentRun!, candidate: candidateRun! };
        const m = await deps.measure(projectId, currentRun!, candidateRun!);
        const lower = new Set(gate.lower_is_better);
        for (const name of gate.scores) conditions.push(scoreCondition(name, lower.has(name), gate.alpha, m.scores.get(name), runs));
        if (gate.max_cost_increase_pct !== null) conditions.push(costCondition(gate.max_cost_increase_pct, m.cost, runs));
      }
    }
    if (gate.require_approval) {
      const approvals = await gateRepo.approvalsOf(db, projectId, promptId, label, version);
      conditions.push({
        condition: 'approval',
        status: approvals.length > 0 ? 'passed' : 'failed',
        detail:
          approvals.length > 0
            ? `approved by ${approvals.map((a) => a.approved_by).join(', ')}`
            : `approval: version ${version} needs the approval of an admin other than its author (POST …/labels/${label}/approvals)`,
        figures: { approved_by: approvals.map((a) => a.approved_by) },
      });
    }
    return {
      prompt_id: promptId,
      label,
      version,
      current_version: current,
      passed: passes(conditions),
      gate: presentGate(promptId, gate),
      evidence: { candidate_run: presentRunRef(candidateRun), current_run: presentRunRef(currentRun) },
      conditions,
    };
  }

  return {
    /** The gates of every protected label of a prompt (none: an empty list; 404 for a prompt not the project's). */
    async list(projectId: string, promptId: string) {
      if (!(await promptRepo.findPrompt(db, projectId, promptId))) throw notFound('Prompt');
      return { items: (await gateRepo.gatesOf(db, projectId, promptId)).map((g) => presentGate(promptId, g)) };
    },

    async get(projectId: string, promptId: string, label: string) {
      return presentGate(promptId, await gateOf(projectId, promptId, label));
    },

    async set(projectId: string, promptId: string, label: string, input: GateInput, actor: Actor) {
      checkLabelName(label);
      const scores = [...new Set(input.scores ?? [])];
      const lower = [...new Set(input.lower_is_better ?? [])];
      const stray = lower.filter((s) => !scores.includes(s));
      if (stray.length > 0) throw unprocessable(`lower_is_better: ${stray.join(', ')} not in scores`);
      if (!UUID.test(input.dataset_id)) throw unprocessable(`dataset_id: ${input.dataset_id} is not a dataset id`);
      await deps.dataset(projectId, input.dataset_id).catch((err: unknown) => {
        if ((err as { resource?: string }).resource === 'dataset')
          throw unprocessable(`dataset_id: no dataset ${input.dataset_id} in this project`);
        throw err;
      });
      const config: GateConfig = {
        dataset_id: input.dataset_id,
        scores,
        lower_is_better: lower,
        alpha: input.alpha ?? 0.05,
        max_cost_increase_pct: input.max_cost_increase_pct ?? null,
        require_approval: input.require_approval ?? false,
      };
      const row = await changeGate(projectId, promptId, label, actor, 'gate_set', async (tx) => {
        const saved = await gateRepo.upsertGate(tx, projectId, promptId, label, config, actor.userId);
        return { result: saved, details: config };
      });
      return presentGate(promptId, row!);
    },

    async remove(projectId: string, promptId: string, label: string, actor: Actor) {
      checkLabelName(label);
      const removed = await changeGate(projectId, promptId, label, actor, 'gate_removed', async (tx) => {
        const gate = await gateRepo.deleteGate(tx, projectId, promptId, label);
        return gate ? { result: true, details: presentGate(promptId, gate) } : undefined;
      });
      if (!removed) throw notFound(`Gate of label ${label}`, 'gate');
    },

    /** The dry run: every condition for moving the label to `version`, nothing moved. */
    async check(projectId: string, promptId: string, label: string, q: { version: number; gate_run_id?: string }) {
      const gate = await gateOf(projectId, promptId, label);
      await deps.prompts.checkLabelTarget(projectId, promptId, label, q.version);
      return evaluate(projectId, promptId, label, gate, q.version, q.gate_run_id);
    },

    /** Moves a label: through its gate when it has one; an admin may override a failing gate with a reason. */
    async move(projectId: string, promptId: string, label: string, input: LabelMoveInput, actor: Actor, role: Role) {
      await deps.prompts.checkLabelTarget(projectId, promptId, label, input.version);
      if (input.override) {
        if (role !== 'admin') throw new Forbidden('override: only an admin may move a label past its release gate');
        if (!input.reason?.trim()) throw badRequest('reason: an override needs a reason');
      }
      const gate = await gateRepo.findGate(db, projectId, promptId, label);
      if (!gate) {
        if (input.override || input.gate_run_id)
          throw unprocessable(`${input.override ? 'override' : 'gate_run_id'}: label ${label} is not protected by a release gate`);
        await deps.prompts.setLabel(projectId, promptId, label, input.version, { actor, reason: input.reason });
        return { prompt_id: promptId, label, version: input.version };
      }
      const check = await evaluate(projectId, promptId, label, gate, input.version, input.gate_run_id);
      // Already there: nothing moves, nothing is recorded.
      if (check.current_version === input.version)
        return { prompt_id: promptId, label, version: input.version, overridden: false, gate: check };
      if (!check.passed && !input.override) throw conflict(refusal(label, input.version, check.conditions));
      const overridden = !check.passed;
      await deps.prompts.setLabel(projectId, promptId, label, input.version, {
        actor,
        reason: input.reason,
        decision: {
          gateUpdatedAt: gate.updated_at,
          fromVersion: check.current_version,
          passed: check.passed,
          ...(overridden ? { override: { reason: input.reason! } } : {}),
          details: { passed: check.passed, evidence: check.evidence, conditions: check.conditions },
        },
      });
      return { prompt_id: promptId, label, version: input.version, overridden, gate: check };
    },

    /** An admin other than the version's author approves it for the label. */
    async approve(projectId: string, promptId: string, label: string, input: { version: number; comment?: string }, actor: Actor) {
      await deps.prompts.checkLabelTarget(projectId, promptId, label, input.version);
      const created = await db.transaction(async (tx) => {
        if (!(await gateRepo.findGate(tx, projectId, promptId, label)))
          throw conflict(`Label ${label} is not protected by a release gate: there is nothing to approve`);
        const v = (await promptRepo.findVersion(tx, projectId, promptId, input.version))!;
        if (v.created_by !== null && v.created_by === actor.userId)
          throw new Forbidden(`approval: ${actor.userId} wrote version ${input.version}; an admin other than its author approves it`);
        const approval = { label, version: input.version, approvedBy: actor.userId, comment: input.comment ?? null };
        if (!(await gateRepo.insertApproval(tx, projectId, promptId, approval)))
          throw conflict(`approval: ${actor.userId} approved version ${input.version} for label ${label} already`);
        await gateRepo.insertEvent(tx, projectId, promptId, {
          label,
          action: 'approved',
          fromVersion: (await promptRepo.findLabel(tx, projectId, promptId, label)) ?? null,
          toVersion: input.version,
          actor: actor.userId,
          apiKeyId: actor.apiKeyId,
          reason: input.comment ?? null,
          details: null,
        });
        return (await gateRepo.approvalsOf(tx, projectId, promptId, label, input.version)).find((a) => a.approved_by === actor.userId)!;
      });
      return {
        prompt_id: promptId,
        label,
        version: created.version,
        approved_by: created.approved_by,
        comment: created.comment,
        created_at: created.created_at.toISOString(),
      };
    },

    /** The label events of a prompt, newest first, a page at a time. */
    async events(projectId: string, promptId: string, q: { limit: number; cursor?: string; label?: string }) {
      if (!(await promptRepo.findPrompt(db, projectId, promptId))) throw notFound('Prompt');
      const rows = await gateRepo.listEvents(db, projectId, promptId, {
        limit: q.limit,
        beforeSeq: cursor.decode(q.cursor),
        label: q.label,
      });
      const last = rows[rows.length - 1];
      return {
        items: rows.map((e) => ({
          event_id: e.seq,
          label: e.label,
          action: e.action,
          from_version: e.from_version,
          to_version: e.to_version,
          actor: e.actor,
          api_key_id: e.api_key_id,
          reason: e.reason,
          details: e.details,
          created_at: e.created_at.toISOString(),
        })),
        next_cursor: rows.length === q.limit && last ? cursor.encode(last.seq) : null,
      };
    },
  };
}

export type LabelGates = ReturnType<typeof createLabelGates>;
