import type { RouteSpec } from '../../route.ts';
import { createScheduleRoute, listSchedulesRoute } from './collection.ts';
import { deleteScheduleRoute, readScheduleRoute, updateScheduleRoute } from './item.ts';

/** /api/workflow/:workflowName/schedules[/:scheduleId]: a company's recurring schedules (Temporal Schedules). */
export const scheduleRoutes: readonly RouteSpec[] = [
  createScheduleRoute,
  listSchedulesRoute,
  readScheduleRoute,
  updateScheduleRoute,
  deleteScheduleRoute,
];
