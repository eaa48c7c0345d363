import type { TSchema } from '@sinclair/typebox';
import type { WorkflowDefinition } from '../../core/workflows/definition.ts';
import {
  BODY_TOO_LARGE,
  DATABASE_UNAVAILABLE,
  INTERNAL_ERROR,
  MALFORMED_JSON,
  PROTOTYPE_KEY,
} from '../middleware/error-handler.ts';
import {
  COMPRESSION_RATIO_TOO_HIGH,
  MALFORMED_COMPRESSED_BODY,
  COMPRESSED_FREE_MB,
  MAX_COMPRESSION_RATIO,
  UNCOMPRESSED_ONLY,
  UNSUPPORTED_ENCODING,
} from '../middleware/body-stream.ts';
import { UNAUTHORIZED } from '../../core/identity.ts';
import { HEADERS_TOO_LARGE } from '../client-errors.ts';
import { UNSUPPORTED_MEDIA_TYPE } from '../http-error.ts';
import { ANONYMOUS_BODY_LIMIT, bytesOf } from '../middleware/json-body.ts';
import {
  ANONYMOUS_BODIES_BUSY,
  COMPANY_BODIES_BUSY,
  FREE_BODY_BYTES,
  GATEWAY_BODIES_BUSY,
  NETWORK_BODIES_BUSY,
} from '../middleware/body-budget.ts';
import {
  MAX_JSON_ARRAY_ITEMS,
  MAX_JSON_DEPTH,
  MAX_JSON_VALUES,
  jsonArrayTooLong,
  jsonTooDeep,
  jsonTooManyValues,
} from '../middleware/json-shape.ts';
import { ErrorResponseSchema, type RouteResponse, type RouteSpec } from '../route.ts';
import { RunResponseSchema } from '../routes/workflow/run-schema.ts';
import { camelCase, JSON_TYPE, pascalCase, plain, type Components, type Json } from './components.ts';

/** An operation's answers: those its route declares, those its request concerns add, and links. */

/**
 * Where an answer's ids lead (OpenAPI links): the email a send made, the run
 * a trigger started. Clients and the fuzzer's stateful phase follow them.
 * Keyed by operationId and status; targets in the same workflow as the source.
 */
const LINKS: Readonly<Record<string, { status: number; links: Record<string, Json> }>> = {
  sendEmail: {
    status: 200,
    links: {
      GetEmailStatus: { operationId: 'getEmailStatus', parameters: { email_id: '$response.body#/email_id' } },
    },
  },
  triggerWorkflow: {
    status: 202,
    links: {
      GetWorkflowRun: { operationId: 'getWorkflowRun', parameters: { runId: '$response.body#/runId' } },
      CancelWorkflowRun: { operationId: 'cancelWorkflowRun', parameters: { runId: '$response.body#/runId' } },
    },
  },
};

/**
 * The route's declared answers, plus those its declared concerns add: the
 * JSON body parser's 400/413/415, the API key's 401 and the catch-all 500
 * (api/middleware/error-handler.ts).
 */
export function responses(
  spec: RouteSpec,
  components: Components,
  isPublic: boolean,
  workflow: WorkflowDefinition | undefined,
): Json {
  const all: Record<number, RouteResponse> = { ...spec.responses };
  const addFailure = (status: number, description: string, messages: readonly string[] = []) => {
    const existing = all[status];
    all[status] = existing
      ? {
          ...existing,
          description: `${existing.description} ${description}`,
          messages: [...(existing.messages ?? []), ...messages],
        }
      : { description, schema: ErrorResponseSchema, messages };
  };
  if (spec.body) {
    addFailure(400, 'The body is not JSON, or breaks the parser\'s bounds (docs/api.md, "Limits").', [
      MALFORMED_JSON,
      PROTOTYPE_KEY,
      jsonTooDeep(MAX_JSON_DEPTH),
      jsonTooManyValues(MAX_JSON_VALUES),
      jsonArrayTooLong(MAX_JSON_ARRAY_ITEMS),
      MALFORMED_COMPRESSED_BODY,
    ]);
    const anonymous = spec.auth?.anonymous
      ? `; ${ANONYMOUS_BODY_LIMIT.toUpperCase()} without an API key`
      : '';
    if (spec.body.signed) addFailure(413, `Over ${spec.body.limit.toUpperCase()}.`, [BODY_TOO_LARGE]);
    else
      addFailure(
        413,
        `Over ${spec.body.limit.toUpperCase()} decoded${anonymous}, or compressed more than ${MAX_COMPRESSION_RATIO} to 1 past its first ${COMPRESSED_FREE_MB} MB.`,
        [BODY_TOO_LARGE, COMPRESSION_RATIO_TOO_HIGH],
      );
    addFailure(415, 'Not `application/json`, or a content encoding the route does not take.', [
      UNSUPPORTED_MEDIA_TYPE,
      spec.body.signed ? UNCOMPRESSED_ONLY : UNSUPPORTED_ENCODING,
    ]);
    if (!isPublic) {
      addFailure(429, "The company's request bodies in flight hold half of BODY_BYTES_IN_FLIGHT_MB.", [
        COMPANY_BODIES_BUSY,
      ]);
      if (bytesOf(spec.body.limit) > FREE_BODY_BYTES)
        addFailure(
          503,
          "A body over 1 MiB while the gateway's room for bodies is full (BODY_BYTES_IN_FLIGHT_MB).",
          [GATEWAY_BODIES_BUSY],
        );
    }
    if (isPublic || spec.auth?.anonymous) {
      // Callers without credentials have a room of their own (api/middleware/body-budget.ts).
      const without = isPublic ? '' : 'Without an API key: ';
      addFailure(
        429,
        `${without}the client network's bodies in flight hold half of the room callers without credentials share.`,
        [NETWORK_BODIES_BUSY],
      );
      addFailure(503, `${without}that room, an eighth of BODY_BYTES_IN_FLIGHT_MB, is full.`, [
        ANONYMOUS_BODIES_BUSY,
      ]);
    }
  }
  if (!isPublic) addFailure(401, 'Missing or invalid API key.', [UNAUTHORIZED]);
  // Node's HTTP parser and the server's limits (api/server-timeouts.ts), before any route.
  addFailure(431, 'The request line and headers together exceed 16 KB.', [HEADERS_TOO_LARGE]);
  // Every route: the route's own 500 (if it declares one), then these.
  const unexpected = 'an unexpected failure (logged), or the database unreachable.';
  addFailure(500, all[500] ? `Or ${unexpected}` : `An ${unexpected}`, [INTERNAL_ERROR, DATABASE_UNAVAILABLE]);

  const out: Json = {};
  for (const [status, answer] of Object.entries(all)) {
    let schema = answer.schema;
    if (workflow && schema === RunResponseSchema) schema = runResponse(workflow, components);
    const messages = [...new Set(answer.messages ?? [])];
    const response: Json = { description: withMessages(answer.description, messages) };
    if (schema || answer.contentType) {
      const media: Json = {};
      if (schema) media['schema'] = components.use(schema);
      if (messages.length > 0) media['examples'] = failureExamples(messages);
      response['content'] = { [answer.contentType ?? JSON_TYPE]: media };
    }
    const headers = headersOf(Number(status), answer);
    if (Object.keys(headers).length > 0) response['headers'] = headers;
    const links = LINKS[spec.operationId];
    if (links?.status === Number(status)) response['links'] = linksFor(links.links, workflow);
    out[status] = response;
  }
  return out;
}

/** The description, then each message the answer may carry, as sent. */
function withMessages(description: string, messages: readonly string[]): string {
  if (messages.length === 0) return description;
  return `${description}\n\nMessages: ${messages.map((m) => `\`${m}\``).join(', ')}.`;
}

/** One example answer per message, named by the message (OpenAPI `examples`). */
function failureExamples(messages: readonly string[]): Json {
  return Object.fromEntries(
    messages.map((message) => [message, { summary: message, value: { success: false, error: message } }]),
  );
}

/**
 * An answer's headers: those its route declares, and `Retry-After` on every
 * 429 and 503 (api/middleware/error-handler.ts sets it from the failure).
 */
function headersOf(status: number, answer: RouteResponse): Json {
  const headers: Json = {};
  for (const [name, description] of Object.entries(answer.headers ?? {}))
    headers[name] = { description, schema: { type: 'string' } };
  if (status === 429 || status === 503)
    headers['Retry-After'] = {
      description: 'Seconds to wait before trying again.',
      schema: { type: 'integer', minimum: 1 },
    };
  return headers;
}

function linksFor(links: Record<string, Json>, workflow: WorkflowDefinition | undefined): Json {
  if (!workflow) return links;
  return Object.fromEntries(
    Object.entries(links).map(([name, link]) => [
      name,
      { ...link, operationId: operationIdFor(String(link['operationId']), workflow) },
    ]),
  );
}

export function operationIdFor(operationId: string, workflow: WorkflowDefinition | undefined): string {
  return workflow ? `${operationId}_${camelCase(workflow.name)}` : operationId;
}

/** GET's 200 for one workflow: the run, with `result.result` typed as that workflow's result. */
function runResponse(def: WorkflowDefinition, components: Components): TSchema {
  const result = components.name(def.result, `${pascalCase(def.name)}Result`);
  const run = plain(RunResponseSchema) as Json & { properties: Json };
  const schema = {
    ...run,
    properties: {
      ...run.properties,
      result: {
        description:
          '`{ result: <what the workflow returned> }` once the run completed; absent before, and for a run that failed or was cancelled.',
        type: 'object',
        properties: { result: components.use(result) },
        required: ['result'],
      },
    },
  };
  return components.name(schema as unknown as TSchema, `${pascalCase(def.name)}Run`);
}
