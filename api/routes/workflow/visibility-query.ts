import { HttpError } from '../../http-error.ts';
import { RUN_NOT_FOUND } from '../../../core/workflows/workflow-messages.ts';

/** Ids a visibility query may carry: lower-case UUIDs only, never caller text. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `CompanyId = '<uuid>'` for a visibility query (runs, schedules). The
 * company comes from authentication, which checks it is a UUID; checked again
 * here because this string goes into a query language.
 */
export function companyClause(companyId: string): string {
  if (!UUID.test(companyId)) throw new HttpError(404, RUN_NOT_FOUND);
  return `CompanyId = '${companyId}'`;
}
