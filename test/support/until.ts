/**
 * Polls `probe` every `everyMs` until it gives a truthy value, and resolves
 * with that value; fails naming `what` once `timeoutMs` has passed. A probe
 * that throws (a server not up yet, a connection refused) counts as "not
 * yet": the tests that poll wait on servers that come and go. The last such
 * error is in the failure's message.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const value = await probe().catch((err: unknown) => void (lastError = err));
    if (value) return value;
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
