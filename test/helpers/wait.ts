// Polling for what happens in the background (trace assembly, budget evaluation, webhook
// delivery): the first truthy value `probe` yields, or a failure naming what was awaited.
export async function until<T>(
  probe: () => Promise<T> | T,
  what: string,
  timeoutMs = 20_000,
): Promise<Exclude<T, undefined | null | false | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as Exclude<T, undefined | null | false | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
