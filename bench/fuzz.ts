// Request fuzzing at volume (issue 30): BENCH_FUZZ_CASES generated requests (default 100,000)
// over every route of the route table, against the real service on embedded stores with an admin
// API key, 10 at a time; prints the status histogram, the 5xx count and the first problems. The
// generator is the one of test/http/http.fuzz.test.ts (test/helpers/request-fuzz.ts).
import fc from 'fast-check';
import { loadApiSchemas } from '../src/http/validation.ts';
import { anyRequest, describeRequest, problemOf, send, startFuzzTarget, type FuzzRequest } from '../test/helpers/request-fuzz.ts';

export interface FuzzFigures {
  cases: number;
  seed: number;
  seconds: number;
  histogram: Array<[number, number]>;
  serverErrors: number;
  problems: string[];
  slowestRoutes: Array<[string, number]>;
}

export async function benchFuzz(cases: number, seed = Date.now() % 2 ** 31, concurrency = 10): Promise<FuzzFigures> {
  const target = await startFuzzTarget({ LOG_LEVEL: 'silent' });
  try {
    const arb = anyRequest(target.svc.app.routes, loadApiSchemas(), target.ctx);
    const histogram = new Map<number, number>();
    const routeMs = new Map<string, number>();
    const problems: string[] = [];
    let serverErrors = 0;
    const started = performance.now();
    const chunk = 1_000;
    for (let done = 0; done < cases; done += chunk) {
      const requests = fc.sample(arb, { numRuns: Math.min(chunk, cases - done), seed: seed + done });
      let next = 0;
      const worker = async () => {
        for (let req: FuzzRequest | undefined; (req = requests[next++]);) {
          const t = performance.now();
          let status = 0;
          let problem: string | undefined;
          try {
            const res = await send(target.svc.url, req);
            status = res.status;
            problem = problemOf(res);
          } catch (err) {
            problem = (err as Error).message;
          }
          routeMs.set(req.route, (routeMs.get(req.route) ?? 0) + performance.now() - t);
          histogram.set(status, (histogram.get(status) ?? 0) + 1);
          if (status >= 500) serverErrors++;
          if (problem && problems.length < 20) problems.push(`${describeRequest(req)} → ${problem}`);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    }
    return {
      cases,
      seed,
      seconds: (performance.now() - started) / 1000,
      histogram: [...histogram].sort((a, b) => a[0] - b[0]),
      serverErrors,
      problems,
      slowestRoutes: [...routeMs].sort((a, b) => b[1] - a[1]).slice(0, 5),
    };
  } finally {
    await target.close();
  }
}
