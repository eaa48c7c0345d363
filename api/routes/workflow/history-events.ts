import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';

/**
 * Temporal's history events as the SDK's protobuf types and enum (the
 * `@temporalio/proto` of the same release as `@temporalio/client`), so run
 * status never compares event types with numbers written out by hand.
 */
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
export const { EventType, HistoryEventFilterType } = proto.temporal.api.enums.v1;

/** Whether any of `events` is of `type`. */
export const hasEvent = (events: readonly HistoryEvent[], type: temporal.api.enums.v1.EventType): boolean =>
  events.some((e) => e.eventType === type);
