// How long ingest takes to resume after a poison record (docs/traces.md, "Start times" and "Dead
// letters"), beside the same figure with no poison in the same run: the time from an export's 200
// (or the service's start, for records already in the log) until its execution can be read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
import { agentTrace, appendToIngestLog, spreadOverMonths } from '../test/helpers/ingest-log.ts';
import { removeDataDir } from './data-dir.ts';

const hex = (v: number) => v.toString(16).padStart(32, '0');

const configOf = (dataDir: string) =>
  loadConfig({ DATA_DIR: dataDir, PORT: '0', OTLP_GRPC_PORT: '0', LOG_LEVEL: 'silent', AUTH_REQUIRED: 'false' });

async function start(dataDir: string): Promise<Service> {
  return startService(configOf(dataDir), { logger: createLogger({ logLevel: 'silent' }) });
}

const send = (svc: Service, body: string) =>
  fetch(`${svc.url}/api/v1/traces`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

/** Ms from `since` until the execution of trace `t` can be read. */
async function visibleAfter(svc: Service, t: number, since: number): Promise<number> {
  for (;;) {
    if ((await fetch(`${svc.url}/api/projects/default/executions/${hex(t)}`)).status === 200) return performance.now() - since;
    if (performance.now() - since > 120_000) throw new Error(`trace ${t} not stored within 120 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A normal export after `before` (another export, or none): ms from its 200 to its execution. */
async function afterExport(svc: Service, t: number, before?: string): Promise<number> {
  if (before) {
    const r = await send(svc, before);
    if (r.status !== 200) throw new Error(`the poison export answered ${r.status}`);
  }
  const r = await send(svc, JSON.stringify({ spans: agentTrace(t) }));
  if (r.status !== 200) throw new Error(`the export answered ${r.status}`);
  return visibleAfter(svc, t, performance.now());
}

/** Records already in the log (`bodies` then a normal trace `t`): ms from the start of the service to its execution. */
async function afterRestart(
  dataDir: string,
  encoderFrom: Service,
  t: number,
  bodies: string[],
): Promise<{ ms: number; deadLetters: number }> {
  const encoder = await encoderFrom.stores.clickhouse.encoderOf('spans');
  await encoderFrom.close();
  await appendToIngestLog(configOf(dataDir), encoder, 'default', [...bodies, JSON.stringify({ spans: agentTrace(t) })]);
  const since = performance.now();
  const svc = await start(dataDir);
  const ms = await visibleAfter(svc, t, since);
  const deadLetters = svc.domain.traces.deadLetters.list('default').length;
  await svc.close();
  return { ms, deadLetters };
}

export async function benchPoison(): Promise<Array<{ what: string; value: string }>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-poison-'));
  const rows: Array<{ what: string; value: string }> = [];
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  try {
    let svc = await start(dataDir);
    await afterExport(svc, 0xe0000); // warm: the first execution's queries
    rows.push({ what: 'normal export → its execution readable (raw, same run)', value: s(await afterExport(svc, 0xe0001)) });
    rows.push({
      what: 'after a 1,001-month export (refused at the request, partial success) → the next export readable',
      value: s(await afterExport(svc, 0xe0002, spreadOverMonths(0xe0003))),
    });
    const raw = await afterRestart(dataDir, svc, 0xe0004, []);
    rows.push({ what: 'restart with a normal record in the log → it is readable (raw, same run)', value: s(raw.ms) });
    svc = await start(dataDir);
    const poisoned = await afterRestart(dataDir, svc, 0xe0005, [spreadOverMonths(0xe0006)]);
    rows.push({
      what: `restart with a 1,001-month record ahead of it in the log → it is readable (${poisoned.deadLetters} dead letter set aside)`,
      value: s(poisoned.ms),
    });
  } finally {
    removeDataDir(dataDir);
  }
  return rows;
}
