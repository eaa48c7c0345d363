/**
 * Email records: how they are stored, read back as a status answer, indexed, and swept when a
 * send never finished.
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { ensureEmailIndexes } from './indexes.ts';
export { createRecordStore } from './record-store.ts';
export { runNotSentCommand } from './not-sent-command.ts';
export type { RecordStore } from './record-store.ts';
export { startSweeper, sweepStuckPending } from './sweeper.ts';
export type { SweptRecord } from './sweeper.ts';
export { failedBeforeHandOver, statusOf } from './record.ts';
export type { EmailRecord, TrackedEvent } from './record.ts';
export { toStatus } from './status-view.ts';
export { happenedFilter } from './lifecycle-changes.ts';
export type { LifecycleKind, LifecycleSink } from './lifecycle.ts';
export { startPeriodic } from './periodic.ts';
export { PRUNE_INTERVAL_MS, pruneExpired } from './pruner.ts';
