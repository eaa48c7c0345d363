import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities/index.ts';
import { temporalAddress, temporalNamespace, uniqueName } from './env.ts';
import { installQuietRuntime, workflowBundle } from './temporal-runtime.ts';

/**
 * Activities that answer as a test says and record every call, for testing
 * workflows' decisions without HTTP, a database or a provider (the Temporal
 * samples' way). Unstubbed activities succeed with plain defaults.
 */
export interface StubbedActivities {
  activities: Activities;
  /** Names of the activities called, in order. */
  names(): string[];
  /** Arguments of the first call of `name`. */
  argsOf(name: keyof Activities): unknown[] | undefined;
}

const DEFAULTS: Activities = {
  claimUserWelcomeEmail: async (userId, runId) => ({
    claim: 'claimed',
    idempotencyKey: `${runId}:welcome-email`,
    email: `${userId}@example.com`,
    name: null,
  }),
  releaseWelcomeEmail: async () => undefined,
  readWelcomeUser: async (userId) => ({ email: `${userId}@example.com`, name: null }),
  markWelcomeEmailSent: async () => ({ outcomeHeard: true }),
  deliverWelcomeEmail: async () => ({ emailId: 'email-1', providerId: 'provider-1' }),
  deliverEinEmail: async () => ({ emailId: 'email-1', providerId: 'provider-1', outcomeHeard: true }),
  markEmailFailed: async () => undefined,
  callOffEmail: async () => 'called_off',
  attemptWebhookDelivery: async () => undefined,
  attemptBatchedWebhook: async () => undefined,
  attemptWebhookBatch: async () => [],
  failWebhookDelivery: async () => undefined,
  failWebhookDeliveries: async () => undefined,
  emitWorkflowEvent: async () => undefined,
  deliverScheduledEmail: async (emailId) => ({ emailId, status: 'sent', providerId: 'provider-1' }),
  cancelScheduledEmail: async () => 'cancelled',
  forgetScheduledEmail: async () => undefined,
};

export function stubActivities(overrides: Partial<Activities>): StubbedActivities {
  const calls: Array<{ name: string; args: unknown[] }> = [];
  const merged = { ...DEFAULTS, ...overrides } as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const activities = Object.fromEntries(
    Object.entries(merged).map(([name, fn]) => [
      name,
      (...args: unknown[]) => {
        calls.push({ name, args });
        return fn(...args);
      },
    ]),
  ) as unknown as Activities;
  return {
    activities,
    names: () => calls.map((c) => c.name),
    argsOf: (name) => calls.find((c) => c.name === name)?.args,
  };
}

/**
 * A test environment on the test run's Temporal server for this test file
 * (set up before its tests, torn down after); read `.current` inside tests.
 */
export function useTestEnvironment(): { current: TestWorkflowEnvironment } {
  const ref = {} as { current: TestWorkflowEnvironment };
  before(async () => {
    installQuietRuntime();
    ref.current = await TestWorkflowEnvironment.createFromExistingServer({
      address: temporalAddress(),
      namespace: temporalNamespace(),
    });
  });
  after(() => ref.current.teardown());
  return ref;
}

/** A worker on a task queue of its own, running the real workflow bundle with `activities`. */
export async function startStubWorker(
  env: TestWorkflowEnvironment,
  activities: Activities,
): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = uniqueName('wf_unit');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: temporalNamespace(),
    taskQueue,
    workflowBundle: { code: await workflowBundle() },
    activities,
  });
  return { worker, taskQueue };
}

/** Runs `workflowType` to its end on a stub worker: its value, or the error it failed with. */
export async function executeWithStubs(
  env: TestWorkflowEnvironment,
  workflowType: string,
  input: unknown,
  stubs: StubbedActivities,
  memo: Record<string, unknown> = {},
): Promise<{ value: Record<string, unknown> | undefined; error: unknown; workflowId: string }> {
  const { worker, taskQueue } = await startStubWorker(env, stubs.activities);
  const workflowId = `${workflowType}-${randomUUID()}`;
  const outcome = await worker.runUntil(
    env.client.workflow.execute(workflowType, { taskQueue, workflowId, args: [input], memo }).then(
      (value: Record<string, unknown>) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    ),
  );
  return { ...outcome, workflowId };
}

/**
 * Runs `workflowType` on a stub worker and requests its cancellation while
 * the stubbed `activity` is under way: that stub waits for the cancel
 * request, then answers as it would have. Its value, or the error it ended with.
 */
export async function cancelDuring(
  env: TestWorkflowEnvironment,
  workflowType: string,
  input: unknown,
  activity: keyof Activities,
  options: { overrides?: Partial<Activities>; memo?: Record<string, unknown> } = {},
): Promise<{ value: unknown; error: unknown; stubs: StubbedActivities }> {
  let reached!: () => void;
  const inActivity = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const cancelRequested = new Promise<void>((resolve) => (release = resolve));
  const answer = (options.overrides?.[activity] ?? DEFAULTS[activity]) as (
    ...args: unknown[]
  ) => Promise<unknown>;
  const stubs = stubActivities({
    ...options.overrides,
    [activity]: async (...args: unknown[]) => {
      reached();
      await cancelRequested;
      return answer(...args);
    },
  });
  const { worker, taskQueue } = await startStubWorker(env, stubs.activities);
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(workflowType, {
      taskQueue,
      workflowId: `${workflowType}-${randomUUID()}`,
      args: [input],
      memo: options.memo ?? {},
    });
    await inActivity;
    await handle.cancel();
    release();
    return handle.result().then(
      (value: unknown) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    );
  });
  return { ...outcome, stubs };
}
