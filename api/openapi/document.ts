import type { TSchema } from '@sinclair/typebox';
import { acceptedInput } from '../../core/workflows/accepted-input.ts';
import type { WorkflowDefinition } from '../../core/workflows/definition.ts';
import type { RouteSpec } from '../route.ts';
import { Components, JSON_TYPE, pascalCase, type Json } from './components.ts';
import { identityParameters, objectParameters } from './parameters.ts';
import { operationIdFor, responses } from './responses.ts';
import { outboundWebhooks } from './webhooks.ts';

/**
 * The OpenAPI 3.1 document of the gateway, built from the route declarations
 * (api/route.ts) and the TypeBox schemas that validate requests and type the
 * responses: nothing here restates a field. OpenAPI 3.1 schemas are JSON
 * Schema 2020-12, which TypeBox emits as is.
 */

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
      { name: 'webhooks', description: 'Endpoints that receive signed events, and their deliveries.' },
      { name: 'keys', description: "The company's API keys: create, list, revoke (scope `keys:manage`)." },
      { name: 'health', description: 'Probes and this reference.' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: outboundWebhooks(components),
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
  const generic = { path: openApiPath(spec.path), operation: operation(spec, components) };
  if (!spec.path.includes(':workflowName')) return [generic];
  // Each workflow takes its own input and returns its own result: one operation
  // per registered workflow, so a client (and the fuzzer) sees the real shapes;
  // the templated path stays too, as the interface names it (a concrete path
  // matches first), with the 404 only it can answer: an unknown workflow.
  return [
    generic,
    ...workflows.map((def) => ({
      path: openApiPath(spec.path.replace(':workflowName', def.name)),
      operation: operation(spec, components, def),
    })),
  ];
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

/** A workflow's input as a named component: `<Name>Input`. */
function workflowInput(def: WorkflowDefinition, components: Components): TSchema {
  return components.name(acceptedInput(def), `${pascalCase(def.name)}Input`);
}
