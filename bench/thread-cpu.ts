// Where the API process's CPU goes during a benchmark case, per thread, read from Linux's
// /proc/self/task (clock ticks of user + system time). Threads are grouped by role: the API's own
// thread, the busiest other JavaScript thread (the encoding worker, with INGEST_WORKERS=1), the
// engine's threads (chDB names them: ThreadPool, MergeMutate...), and the rest (V8's garbage
// collector and compiler helpers, libuv's pool). Elsewhere than on Linux it reads nothing.
import fs from 'node:fs';

const TICKS_PER_S = 100;

type Snapshot = Map<string, { name: string; ticks: number }>;

function snapshot(): Snapshot {
  const threads: Snapshot = new Map();
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The name is in parentheses and may hold spaces: the fields after it are counted from its end.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      threads.set(tid, { name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

export interface CpuShares {
  api: number;
  worker: number;
  engine: number;
  other: number;
  /** Seconds the count ran. */
  elapsed: number;
  /** The whole process's CPU time (s), threads that ended meanwhile included (the roles miss those). */
  process: number;
  /** CPU time (s) by thread name, numbers dropped (QueryPipelineEx, MergeMutate, node...): where the engine's part goes. */
  byName: Record<string, number>;
}

/** Starts counting; the returned function gives each role's CPU time (s) since. */
export function countThreadCpu(): () => CpuShares {
  const before = snapshot();
  const started = performance.now();
  const processBefore = process.cpuUsage();
  return () => {
    const after = snapshot();
    const used = process.cpuUsage(processBefore);
    const shares: CpuShares = {
      api: 0,
      worker: 0,
      engine: 0,
      other: 0,
      elapsed: (performance.now() - started) / 1000,
      process: (used.user + used.system) / 1e6,
      byName: {},
    };
    let busiestJs = 0;
    const js: number[] = [];
    for (const [tid, t] of after) {
      const s = (t.ticks - (before.get(tid)?.ticks ?? 0)) / TICKS_PER_S;
      const group = tid === String(process.pid) ? 'api' : t.name.replace(/[\d:_-]+$/, '');
      shares.byName[group] = (shares.byName[group] ?? 0) + s;
      if (tid === String(process.pid)) shares.api += s;
      else if (t.name === 'node') js.push(s);
      else shares.engine += s;
    }
    for (const s of js) busiestJs = Math.max(busiestJs, s);
    shares.worker = busiestJs;
    shares.other = js.reduce((a, b) => a + b, 0) - busiestJs;
    return shares;
  };
}
