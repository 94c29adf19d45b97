// Polling for what happens in the background (trace assembly, budget evaluation): the value once
// `probe` yields one, or a failure naming what was awaited.
export async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not reached in time: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
