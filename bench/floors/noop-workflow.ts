import { proxyActivities } from '@temporalio/workflow';
import { DATABASE_STEP, EMAIL_STEP } from '../../workflows/retry-policy.ts';

/** The no-op activities of the workflow floor. */
export const noopActivities = {
  async noopA(_: string): Promise<string> {
    return 'ok';
  },
  async noopB(_: string): Promise<string> {
    return 'ok';
  },
  async noopC(_: string): Promise<string> {
    return 'ok';
  },
  async noopD(_: string): Promise<string> {
    return 'ok';
  },
};

const { noopA, noopB, noopD } = proxyActivities<typeof noopActivities>(DATABASE_STEP);
const { noopC } = proxyActivities<typeof noopActivities>(EMAIL_STEP);

/**
 * The workflow floor: as many normal activities as send-welcome-email runs on
 * its sending path (user read, claim, send, mark sent), each doing nothing,
 * with the same activity options.
 */
export async function noopWorkflow(input: { userId: string }): Promise<string> {
  await noopA(input.userId);
  await noopB(input.userId);
  await noopC(input.userId);
  await noopD(input.userId);
  return 'done';
}
