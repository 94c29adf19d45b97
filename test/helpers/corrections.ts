// A late correction of an execution exactly as the ledger writes one: a cancel row (sign -1, same
// version and key as the live row) and a new version (sign +1) carrying the changes, in one insert.
import type { ClickHouseStore } from '../../src/stores/clickhouse.ts';

export async function correctExecution(ch: ClickHouseStore, traceId: string, changes: Record<string, unknown>, projectId = 'default') {
  const [row] = await ch.query<Record<string, unknown>>(
    'SELECT * FROM executions WHERE project_id = {p:String} AND trace_id = {t:String} AND sign = 1 ORDER BY version DESC LIMIT 1',
    { p: projectId, t: traceId },
  );
  if (!row) throw new Error(`no live execution ${traceId}`);
  await ch.insert('executions', [
    { ...row, sign: -1 },
    { ...row, ...changes, version: Number(row.version) + 1, sign: 1 },
  ]);
}
