/**
 * Idempotency: HTTP `Idempotency-Key`s (request-idempotency.ts) and the keys that make a
 * workflow step's send happen once (step-send-keys.ts).
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { createRequestIdempotency, ReplayedFailure } from './request-idempotency.ts';
export type { RequestKind } from './request-idempotency.ts';
export { createStepSendKeys } from './step-send-keys.ts';
