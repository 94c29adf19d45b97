// The load generator of the dense-score benchmark, run as its own process (its CPU and event loop
// are not the server's): C keep-alive clients POST batches of 1,000 new scores spread over the
// same T traces for D seconds, while a prober asks GET /api/health every 50 ms on its own
// connection. Prints one JSON line: scores stored, batches, errors and every probe's latency.
// argv: url traces clients seconds
import http from 'node:http';

const [url, tracesArg, clientsArg, secondsArg] = process.argv.slice(2);
const TRACES = Number(tracesArg);
const CLIENTS = Number(clientsArg);
const SECONDS = Number(secondsArg);
const traceId = (i: number) => `de${(i % TRACES).toString(16).padStart(30, '0')}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function request(path: string, a: http.Agent, body?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: body ? 'POST' : 'GET',
        agent: a,
        headers: body ? { 'Content-Type': 'application/json', 'Content-Length': body.length } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let next = 0;
const batch = () => {
  const scores = Array.from({ length: 1_000 }, () => {
    const i = next++;
    return { trace_id: traceId(i), name: i % 2 ? 'judge' : 'helpful', value: (i % 10) / 10 };
  });
  return Buffer.from(JSON.stringify(scores));
};

const until = performance.now() + SECONDS * 1_000;
let stored = 0;
let batches = 0;
const errors: Record<string, number> = {};
const probes: number[] = [];
const clients = Array.from({ length: CLIENTS }, async () => {
  while (performance.now() < until) {
    const status = await request('/api/projects/default/scores', agent, batch()).catch(() => 0);
    if (status === 201) {
      stored += 1_000;
      batches++;
    } else errors[status] = (errors[status] ?? 0) + 1;
  }
});
const prober = (async () => {
  while (performance.now() < until) {
    const t0 = performance.now();
    await request('/api/health', probeAgent).catch(() => 0);
    probes.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
})();
const t0 = performance.now();
await Promise.all([...clients, prober]);
console.log(JSON.stringify({ stored, batches, errors, seconds: (performance.now() - t0) / 1_000, probes }));
agent.destroy();
probeAgent.destroy();
