import { Type, type Static } from '@sinclair/typebox';
import type { Client } from '@temporalio/client';
import { HttpError } from '../../http-error.ts';
import { defineRoute, failure } from '../../route.ts';
import type { AppContext } from '../../types.ts';
import { describeRun } from './find-run.ts';
import { WORKFLOW_ACCESS, WORKFLOW_AUTH_FAILURES, reachOf } from './owner.ts';
import { runningHistory } from './run-history.ts';
import { viewRun } from './run-status.ts';
import { decodeCursor, encodeCursor } from './runs-cursor.ts';
import { companyClause } from './visibility-query.ts';
import { RUN_STATUSES, RunListResponseSchema, WorkflowNameParams, type RunListItem } from './run-schema.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from './temporal-errors.ts';
import { CURSOR_INVALID, workflowNotFound } from '../../../core/workflows/workflow-messages.ts';

/** Runs per page unless `limit` says otherwise (1 to 100: RunListQuery). */
const DEFAULT_RUNS_LIMIT = 20;

/**
 * Visibility pages one request reads at most. The query narrows by company,
 * workflow, status and start time, but not by what the caller reaches within
 * the company (its organization, for a bound key; its mode, test or live) nor
 * pending from running: there is no search attribute for those, so such runs
 * are dropped after the read. Reading on until the page holds `limit` runs
 * keeps a page from coming back short, or empty with a cursor, while runs
 * remain; the bound keeps one request's cost (a read, and a describe per run
 * read) within 10 pages when most of the company's runs are out of reach.
 */
export const MAX_VISIBILITY_PAGES = 10;

/** The list's query, as strings (a query string has no numbers); checked before anything is asked of Temporal. */
export const RunListQuery = Type.Object({
  status: Type.Optional(Type.Union(RUN_STATUSES.map((s) => Type.Literal(s)))),
  from: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
  to: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
  limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100 (default 20)' })),
  cursor: Type.Optional(Type.String({ maxLength: 4096 })),
});
type RunListQuery = Static<typeof RunListQuery>;

/** The run status filter as Temporal's ExecutionStatus (pending and running are both Running there). */
const EXECUTION_STATUS = {
  pending: 'Running',
  running: 'Running',
  completed: 'Completed',
  failed: ['Failed', 'TimedOut', 'Terminated'],
  cancelled: 'Canceled',
} as const;

const quoted = (value: string) => `'${value}'`;

/**
 * The visibility query, built only from validated values (the registry's
 * workflow type, the caller's UUID, a status from a fixed list, dates
 * re-serialised by Date): nothing a caller types reaches it verbatim.
 */
function visibilityQuery(workflowType: string, companyId: string, q: RunListQuery): string {
  const parts = [`WorkflowType = ${quoted(workflowType)}`, companyClause(companyId)];
  if (q.status) {
    const status = EXECUTION_STATUS[q.status];
    parts.push(
      typeof status === 'string'
        ? `ExecutionStatus = ${quoted(status)}`
        : `ExecutionStatus IN (${status.map(quoted).join(', ')})`,
    );
  }
  if (q.from) parts.push(`StartTime >= ${quoted(new Date(q.from).toISOString())}`);
  if (q.to) parts.push(`StartTime < ${quoted(new Date(q.to).toISOString())}`);
  return parts.join(' AND ');
}

/**
 * A page of the listing: up to `limit` runs the caller reaches, read from
 * visibility pages until it is full, the listing ends or MAX_VISIBILITY_PAGES
 * were read. Each read asks for as many runs as the page still lacks, so no
 * run read is left out of the page: the token after the last read continues
 * exactly where this page stops.
 */
async function readPage(
  temporal: Client,
  ctx: AppContext,
  query: string,
  limit: number,
  status: RunListQuery['status'],
  pageToken: Uint8Array | undefined,
): Promise<{ runs: RunListItem[]; token: Uint8Array | undefined }> {
  const runs: RunListItem[] = [];
  let token = pageToken;
  for (let read = 0; read < MAX_VISIBILITY_PAGES && runs.length < limit; read++) {
    const page = await withinDeadline(async () => {
      const listed = await temporal.workflowService.listWorkflowExecutions({
        namespace: temporal.options.namespace,
        pageSize: limit - runs.length,
        query,
        ...(token ? { nextPageToken: token } : {}),
      });
      const executions = (listed.executions ?? []).flatMap((e) =>
        e.execution?.workflowId && e.execution.runId
          ? [{ workflowId: e.execution.workflowId, runId: e.execution.runId }]
          : [],
      );
      const items = await Promise.all(executions.map((e) => listItem(temporal, ctx, e)));
      return { items, token: listed.nextPageToken };
    });
    runs.push(
      ...page.items.filter(
        (item): item is RunListItem => item !== undefined && (!status || item.status === status),
      ),
    );
    token = page.token?.length ? page.token : undefined;
    if (!token) break;
  }
  return { runs, token };
}

/** One item: the status answer of that run, without `result` (undefined when out of the caller's reach). */
async function listItem(
  temporal: Client,
  ctx: AppContext,
  execution: { workflowId: string; runId: string },
): Promise<RunListItem | undefined> {
  const def = ctx.state.workflow;
  // The run as `GET ?runId=` answers it: its latest execution. An execution a
  // reset (or continue-as-new) replaced is not listed: the run appears once,
  // where its latest execution stands, with that one's status.
  const found = await describeRun(temporal, def, execution.workflowId, reachOf(ctx)).catch((err: unknown) => {
    if (err instanceof HttpError && err.status === 404) return undefined;
    throw err;
  });
  if (!found || found.desc.runId !== execution.runId) return undefined;
  const { handle, desc } = found;
  const events = desc.status.name === 'RUNNING' ? await runningHistory(temporal, desc) : [];
  const { result: _result, ...view } = await viewRun(handle, desc, events, { withResult: false });
  return { runId: execution.workflowId, workflowName: def.name, ...view };
}

/** GET /api/workflow/:workflowName/runs: the caller's company's runs of that workflow, newest first. */
export const listRoute = defineRoute({
  method: 'get',
  path: '/api/workflow/:workflowName/runs',
  operationId: 'listWorkflowRuns',
  summary: "The company's runs of a workflow, newest first",
  description:
    'From Temporal visibility (the CompanyId search attribute): each item is the status answer without `result`. ' +
    "Page with `cursor` (the previous answer's `nextCursor`, null on the last page). A page holds `limit` runs " +
    `unless it is the last, or the gateway read ${MAX_VISIBILITY_PAGES} visibility pages of runs the caller does ` +
    "not reach (another organization's for a bound key, the other mode's; pending and running are both running " +
    'in Temporal) without filling it: then it holds fewer, maybe none, and `nextCursor` goes on. `status` ' +
    'filters, `from`/`to` bound the start time (RFC 3339, `to` exclusive).',
  tag: 'workflow',
  params: WorkflowNameParams,
  query: RunListQuery,
  ...WORKFLOW_ACCESS.read,
  responses: {
    200: { description: 'A page of runs.', schema: RunListResponseSchema },
    400: failure('A filter, limit or cursor that is not valid.', [CURSOR_INVALID]),
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:read scope.'),
    404: failure('Unknown workflow.', [workflowNotFound('NAME')]),
    500: failure('Temporal could not be read.'),
  },
  async handler(ctx, { temporal, config }) {
    // Checked by the route's query validation, a repeated parameter by its first value as on
    // every route (api/middleware/request-validation.ts), so one request is never read two ways.
    const q = ctx.valid.query;
    if (q.from && q.to && Date.parse(q.from) >= Date.parse(q.to))
      throw new HttpError(400, 'from must be before to');
    const def = ctx.state.workflow;
    const principal = ctx.state.principal;
    const { companyId } = ctx.state.company;
    const query = visibilityQuery(def.workflowType, companyId, q);
    // The cursor continues exactly this listing, for exactly this caller.
    const scope = JSON.stringify([
      companyId,
      principal.boundOrganizationId ?? null,
      ctx.state.company.test === true,
      def.name,
      query,
      q.status ?? null,
    ]);
    const pageToken = q.cursor ? decodeCursor(config.secret, scope, q.cursor) : undefined;
    const limit = q.limit ? Number(q.limit) : DEFAULT_RUNS_LIMIT;
    try {
      const { runs, token } = await readPage(temporal, ctx, query, limit, q.status, pageToken);
      const nextCursor = token ? encodeCursor(config.secret, scope, token) : null;
      ctx.body = { success: true, workflowName: def.name, runs, nextCursor };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw temporalError(err, 'list workflow runs');
    }
  },
});
