import type { TObject, TSchema } from '@sinclair/typebox';
import {
  BulkBodySchema,
  BulkResponseSchema,
  OkResponseSchema,
  SendBodySchema,
  SendResponseSchema,
  StatusResponseSchema,
  TrackBodySchema,
} from '../../core/email/schema.ts';
import type { WorkflowDefinition } from '../../core/workflows/definition.ts';
import { BODY_TOO_LARGE, INTERNAL_ERROR, MALFORMED_JSON } from '../middleware/error-handler.ts';
import { IDENTITY_HEADERS } from '../middleware/authenticate.ts';
import { MALFORMED_COMPRESSED_BODY, UNSUPPORTED_ENCODING } from '../middleware/body-stream.ts';
import { ANONYMOUS_BODY_LIMIT, UNSUPPORTED_MEDIA_TYPE } from '../middleware/json-body.ts';
import { MAX_JSON_DEPTH, MAX_JSON_VALUES, jsonTooDeep, jsonTooManyValues } from '../middleware/json-shape.ts';
import { ErrorResponseSchema, type RouteSpec } from '../route.ts';
import { CancelResponseSchema, RunResponseSchema, TriggerResponseSchema } from '../routes/workflow/schema.ts';

/**
 * The OpenAPI 3.1 document of the gateway, built from the route declarations
 * (api/route.ts) and the TypeBox schemas that validate requests and type the
 * responses: nothing here restates a field. OpenAPI 3.1 schemas are JSON
 * Schema 2020-12, which TypeBox emits as is.
 */

type Json = Record<string, unknown>;

/** Schemas listed once under `components.schemas` and referenced by name. */
const NAMED_SCHEMAS: ReadonlyArray<readonly [TSchema, string]> = [
  [ErrorResponseSchema, 'ErrorResponse'],
  [SendBodySchema, 'SendEmailRequest'],
  [SendResponseSchema, 'SendEmailResponse'],
  [BulkBodySchema, 'SendBulkEmailRequest'],
  [BulkResponseSchema, 'SendBulkEmailResponse'],
  [StatusResponseSchema, 'EmailStatusResponse'],
  [TrackBodySchema, 'TrackEventRequest'],
  [OkResponseSchema, 'OkResponse'],
  [TriggerResponseSchema, 'TriggerWorkflowResponse'],
  [CancelResponseSchema, 'CancelWorkflowResponse'],
];

const JSON_TYPE = 'application/json';

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

export interface DocumentOptions {
  /** `info.version`. */
  version: string;
  /** The workflows `/api/workflow/{workflowName}` serves (core/workflows/registry.ts). */
  workflows: readonly WorkflowDefinition[];
}

/** The whole document for `routes`. Deterministic: the same routes give the same JSON. */
export function buildOpenApiDocument(routes: readonly RouteSpec[], options: DocumentOptions): Json {
  const components = new Components();
  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of routes) {
    for (const { path, operation } of operationsOf(spec, options.workflows, components)) {
      (paths[path] ??= {})[spec.method] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Mailroom API',
      version: options.version,
      description:
        'Transactional email (send, bulk, status, tracking, provider webhook) and durable workflows ' +
        '(trigger, status, cancel). Every failure is `{ "success": false, "error": "<message>" }`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'email', description: 'Send email and follow what happened to it.' },
      { name: 'workflow', description: 'Start, follow and cancel workflow runs.' },
      { name: 'health', description: 'Probes and this reference.' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'mr_…',
          description:
            'An API key (`Authorization: Bearer mr_…`). Public routes (tracking, the provider webhook, ' +
            'probes, this reference) take none. A gateway run with `AUTH_MODE=trusted-headers` ' +
            'sits behind a proxy that authenticates and takes the identity headers as given.',
        },
      },
      schemas: components.schemas,
    },
  };
}

/** The document paths of one route: one, or one per workflow for `/api/workflow/:workflowName`. */
function operationsOf(
  spec: RouteSpec,
  workflows: readonly WorkflowDefinition[],
  components: Components,
): Array<{ path: string; operation: Json }> {
  if (!spec.path.includes(':workflowName'))
    return [{ path: openApiPath(spec.path), operation: operation(spec, components) }];
  // Each workflow takes its own input and returns its own result: one operation
  // per registered workflow, so a client (and the fuzzer) sees the real shapes.
  return workflows.map((def) => ({
    path: openApiPath(spec.path.replace(':workflowName', def.name)),
    operation: operation(spec, components, def),
  }));
}

/** Koa's `/a/:b` as OpenAPI's `/a/{b}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:(\w+)/g, '{$1}');
}

function operation(spec: RouteSpec, components: Components, workflow?: WorkflowDefinition): Json {
  const op: Json = {
    operationId: operationIdFor(spec.operationId, workflow),
    summary: workflow ? `${spec.summary}: ${workflow.name}` : spec.summary,
    tags: [spec.tag],
  };
  const description = [spec.description, workflow?.description].filter(Boolean).join('\n\n');
  if (description) op['description'] = description;
  // Routes without `auth` are public: tracking, SendGrid's webhook, the probes, this reference.
  const isPublic = spec.auth === undefined;
  if (isPublic) op['security'] = [];

  const parameters = [
    ...objectParameters(spec.params, 'path', workflow ? ['workflowName'] : []),
    ...objectParameters(spec.query, 'query'),
    ...identityParameters(spec),
    ...objectParameters(spec.headers, 'header'),
  ];
  if (parameters.length > 0) op['parameters'] = parameters;

  if (spec.body) {
    const schema =
      workflow && spec.operationId === 'triggerWorkflow'
        ? workflowInput(workflow, components)
        : spec.body.schema;
    op['requestBody'] = {
      required: true,
      content: { [JSON_TYPE]: { schema: components.use(schema) } },
    };
  }
  op['responses'] = responses(spec, components, isPublic, workflow);
  return op;
}

/**
 * One parameter per property of a route's params, query or headers (path
 * parameters are always required; headers are declared lower-case, and
 * documented as `Idempotency-Key`).
 */
function objectParameters(
  schema: TObject | undefined,
  where: 'path' | 'query' | 'header',
  skip: string[] = [],
): Json[] {
  if (!schema) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties)
    .filter(([name]) => !skip.includes(name))
    .map(([name, property]) => {
      const { description, ...rest } = plain(property);
      return {
        name: where === 'header' ? headerName(name) : name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description === undefined ? {} : { description }),
        schema: rest,
      };
    });
}

/** The identity headers of an authenticated route (api/middleware/authenticate.ts). */
function identityParameters(spec: RouteSpec): Json[] {
  if (!spec.auth) return [];
  const WHAT = { companyId: 'company', organizationId: 'organization', userId: 'user' } as const;
  return (Object.entries(IDENTITY_HEADERS) as Array<[keyof typeof WHAT, string]>).map(([field, header]) => ({
    name: headerName(header),
    in: 'header',
    required: false,
    description: spec.auth?.identityFromKey
      ? `The calling ${WHAT[field]}'s id (a UUID). Optional: the API key names the company (and ` +
        'organization); a header that is sent must match the key.'
      : `The calling ${WHAT[field]}'s id (a UUID), matching the API key. Sending with a template that ` +
        'requires authentication needs all three identity headers.',
    schema: { type: 'string', format: 'uuid' },
  }));
}

/**
 * The route's declared answers, plus those its declared concerns add: the
 * JSON body parser's 400/413/415, the API key's 401 and the catch-all 500
 * (api/middleware/error-handler.ts).
 */
function responses(
  spec: RouteSpec,
  components: Components,
  isPublic: boolean,
  workflow: WorkflowDefinition | undefined,
): Json {
  const all: Record<number, { description: string; schema?: TSchema; contentType?: string }> = {
    ...spec.responses,
  };
  const addFailure = (status: number, description: string) => {
    const existing = all[status];
    all[status] = existing
      ? { ...existing, description: `${existing.description} ${description}` }
      : { description, schema: ErrorResponseSchema };
  };
  if (spec.body) {
    addFailure(
      400,
      `\`${MALFORMED_JSON}\` when the body is not JSON; \`${jsonTooDeep(MAX_JSON_DEPTH)}\`; ` +
        `\`${jsonTooManyValues(MAX_JSON_VALUES)}\`; \`${MALFORMED_COMPRESSED_BODY}\``,
    );
    const anonymous = spec.auth?.anonymous
      ? `; ${ANONYMOUS_BODY_LIMIT.toUpperCase()} without an API key`
      : '';
    addFailure(413, `\`${BODY_TOO_LARGE}\` (over ${spec.body.limit.toUpperCase()} decoded${anonymous}).`);
    addFailure(415, `\`${UNSUPPORTED_MEDIA_TYPE}\`; \`${UNSUPPORTED_ENCODING}\``);
  }
  if (!isPublic) addFailure(401, 'Missing or invalid API key.');
  if (!all[500]) addFailure(500, `\`${INTERNAL_ERROR}\`: an unexpected failure (logged).`);

  const out: Json = {};
  for (const [status, answer] of Object.entries(all)) {
    let schema = answer.schema;
    if (workflow && schema === RunResponseSchema) schema = runResponse(workflow, components);
    const response: Json = { description: answer.description };
    if (schema || answer.contentType) {
      const media: Json = {};
      if (schema) media['schema'] = components.use(schema);
      response['content'] = { [answer.contentType ?? JSON_TYPE]: media };
    }
    const links = LINKS[spec.operationId];
    if (links?.status === Number(status)) response['links'] = linksFor(links.links, workflow);
    out[status] = response;
  }
  return out;
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

function operationIdFor(operationId: string, workflow: WorkflowDefinition | undefined): string {
  return workflow ? `${operationId}_${camelCase(workflow.name)}` : operationId;
}

/** A workflow's input as a named component: `<Name>Input`. */
function workflowInput(def: WorkflowDefinition, components: Components): TSchema {
  return components.name(def.input, `${pascalCase(def.name)}Input`);
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
        description: '`{ result: <what the workflow returned> }` once completed, otherwise null.',
        anyOf: [
          {
            type: 'object',
            properties: { result: components.use(result) },
            required: ['result'],
          },
          { type: 'null' },
        ],
      },
    },
  };
  return components.name(schema as unknown as TSchema, `${pascalCase(def.name)}Run`);
}

/** `components.schemas`, filled as schemas are used: each named schema once, referenced by `$ref`. */
class Components {
  readonly schemas: Record<string, Json> = {};
  private readonly names = new Map<TSchema, string>(NAMED_SCHEMAS.map(([s, n]) => [s, n]));

  /** Gives `schema` a component name (idempotent). */
  name(schema: TSchema, name: string): TSchema {
    if (!this.names.has(schema)) this.names.set(schema, name);
    return schema;
  }

  /** A `$ref` for a named schema (added to the components the first time), else the schema inline. */
  use(schema: TSchema): Json {
    const name = this.names.get(schema);
    if (!name) return plain(schema);
    this.schemas[name] ??= plain(schema);
    return { $ref: `#/components/schemas/${name}` };
  }
}

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys dropped). */
function plain(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** `x-company-id` → `X-Company-Id`. */
function headerName(lowerCase: string): string {
  return lowerCase.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function pascalCase(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
}

function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}
