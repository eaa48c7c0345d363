import { settle } from './processes.ts';

/**
 * Measures the floor and ours in `rounds` alternating rounds (floor first in
 * even rounds, ours first in odd ones; use an even number, so neither side
 * runs second more often: the second measurement of a round pays for the
 * first one's leftover work). Each measurement starts once the `idle`
 * processes are idle (`settle`). Answers each side's measurements in order.
 */
export async function alternatingRounds<T>(
  rounds: number,
  idle: Array<number | undefined>,
  measure: { floor: (round: number) => Promise<T>; ours: (round: number) => Promise<T> },
): Promise<{ floor: T[]; ours: T[] }> {
  const results = { floor: [] as T[], ours: [] as T[] };
  const run = async (side: 'floor' | 'ours', round: number) => {
    await settle(idle);
    results[side].push(await measure[side](round));
  };
  for (let round = 0; round < rounds; round++) {
    const [first, second] = round % 2 === 0 ? (['floor', 'ours'] as const) : (['ours', 'floor'] as const);
    await run(first, round);
    await run(second, round);
  }
  return results;
}
