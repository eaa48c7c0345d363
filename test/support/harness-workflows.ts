import { sleep } from '@temporalio/workflow';

/**
 * The smallest workflow that proves the test harness works end to end: it is
 * bundled, polled by a real Worker, and uses a durable timer, which only a real
 * Temporal server can fire.
 */
export async function harnessGreeting(name: string): Promise<string> {
  await sleep('50 milliseconds');
  return `hello, ${name}`;
}
