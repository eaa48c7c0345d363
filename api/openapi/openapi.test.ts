import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SendBodySchema } from '../../core/email/email-schema.ts';
import { validateSendBody } from '../../core/email/validate.ts';
import { WORKFLOWS } from '../../core/workflows/registry.ts';
import { validateWorkflowInput } from '../../core/workflows/validate-input.ts';
import { acceptedInput } from '../../core/workflows/accepted-input.ts';
import { useEmailApp } from '../../test/support/email-app.ts';
import { ROUTES } from '../app.ts';
import { buildOpenApiDocument, openApiPath } from './document.ts';
import { REDOC_SCRIPT_PATH } from './routes.ts';
import { plain, type Json } from './components.ts';
import { TEMPLATE_IDS } from '../../templates/index.ts';

type Operation = {
  operationId: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    { content?: Record<string, { schema?: Record<string, unknown> }>; headers?: Record<string, unknown> }
  >;
};
type Document = {
  openapi: string;
  security: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, unknown> };
};

const workflows = Object.values(WORKFLOWS);
const document = buildOpenApiDocument(ROUTES, { version: '0.0.0', workflows }) as unknown as Document;

/** The document paths a mounted route stands for: for `:workflowName`, the templated one and one per workflow. */
const pathsOf = (path: string) =>
  path.includes(':workflowName')
    ? [openApiPath(path), ...workflows.map((def) => openApiPath(path.replace(':workflowName', def.name)))]
    : [openApiPath(path)];

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 2));
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
  });

  it('holds only schemas that compile as JSON Schema 2020-12 (the dialect of OpenAPI 3.1)', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    const refs = (schema: unknown): unknown =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as unknown;
    for (const { path, method, op } of operations()) {
      const schemas = [
        ...Object.values(op.requestBody?.content ?? {}).map((m) => m.schema),
        ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {}).map((m) => m.schema)),
      ].filter(Boolean);
      for (const schema of schemas)
        assert.doesNotThrow(() => ajv.compile(refs(schema) as object), `${method} ${path}`);
    }
  });

  it('describes every mounted route, once per method, with its operationId', () => {
    for (const route of ROUTES) {
      for (const path of pathsOf(route.path)) {
        const op = document.paths[path]?.[route.method];
        assert.ok(op, `${route.method.toUpperCase()} ${path} is missing`);
        assert.ok(op.operationId.startsWith(route.operationId), `${path}: ${op.operationId}`);
      }
    }
    const expected = ROUTES.flatMap((r) => pathsOf(r.path).map((p) => `${r.method} ${p}`)).sort();
    assert.deepEqual(
      operations()
        .map(({ method, path }) => `${method} ${path}`)
        .sort(),
      expected,
    );
    const ids = operations().map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  it('declares every tag its operations use, with a description', () => {
    const declared = new Map(
      (document as unknown as { tags: Array<{ name: string; description?: string }> }).tags.map((t) => [
        t.name,
        t.description,
      ]),
    );
    for (const { path, method, op } of operations())
      for (const tag of (op as { tags?: string[] }).tags ?? [])
        assert.ok(declared.get(tag), `${method} ${path}: tag ${tag} is declared`);
  });

  it('has an operation for every /docs#tag/…/operation/… link of the README and docs/', () => {
    const files = ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`)].filter((f) =>
      f.endsWith('.md'),
    );
    const anchors = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\/docs#tag\/([\w-]+)\/operation\/([\w-]+)/g)].map(
        ([, tag, id]) => ({ file, tag: tag!, id: id! }),
      ),
    );
    assert.ok(anchors.length >= 5, 'the README links the reference');
    for (const { file, tag, id } of anchors) {
      const op = operations().find(({ op }) => op.operationId === id)?.op as { tags?: string[] } | undefined;
      assert.ok(op, `${file}: no operation ${id}`);
      assert.ok(op.tags?.includes(tag), `${file}: ${id} is not tagged ${tag}`);
    }
  });

  it('takes request bodies from the schemas that validate them', () => {
    const send = document.paths['/api/email/send']!['post']!;
    assert.deepEqual(send.requestBody!.content['application/json']!.schema, {
      $ref: '#/components/schemas/SendEmailRequest',
    });
    assert.deepEqual(document.components.schemas['SendEmailRequest'], plain(SendBodySchema));
    // The interface's limits that validate.ts checks itself are stated as keywords all the same.
    const sendFields = (
      document.components.schemas['SendEmailRequest'] as { properties: Record<string, Json> }
    ).properties;
    assert.deepEqual([sendFields['subject']!['minLength'], sendFields['subject']!['maxLength']], [1, 200]);
    assert.equal((sendFields['attachments'] as { maxItems?: number }).maxItems, 10);
    const recipientList = (sendFields['to']!['anyOf'] as Json[]).find((form) => form['type'] === 'array')!;
    assert.equal(recipientList['maxItems'], 50);
    assert.deepEqual(sendFields['template_id']!['enum'], [...TEMPLATE_IDS]);
    assert.doesNotMatch(JSON.stringify(document), /x-checked-in-code/);
    // Bulk items are send bodies with an `id`: every field of a send, send_at included, is shown.
    const bulkSchema =
      document.paths['/api/email/bulk']!['post']!.requestBody!.content['application/json']!.schema;
    const bulkRef = bulkSchema['$ref'];
    const bulk = (
      typeof bulkRef === 'string' ? document.components.schemas[bulkRef.split('/').at(-1)!] : bulkSchema
    ) as { properties: { emails: { items: { properties: Record<string, unknown> }; maxItems: number } } };
    const itemFields = Object.keys(bulk.properties.emails.items.properties);
    assert.deepEqual(itemFields.sort(), ['id', ...Object.keys(SendBodySchema.properties)].sort());
    assert.equal(bulk.properties.emails.maxItems, 100);
    for (const def of workflows) {
      const trigger = document.paths[`/api/workflow/${def.name}`]!['post']!;
      const ref = trigger.requestBody!.content['application/json']!.schema['$ref'] as string;
      const name = ref.split('/').at(-1)!;
      assert.deepEqual(document.components.schemas[name], JSON.parse(JSON.stringify(acceptedInput(def))));
    }
  });

  it('publishes trigger bodies the gateway accepts in either spelling of each key', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    const ein = WORKFLOWS['send-email-received-ein']!;
    const published = ajv.getSchema('doc#/components/schemas/SendEmailReceivedEinInput')!;
    const ids = {
      userId: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
      companyId: '6f1c2a7e-0a4b-4c43-9a57-2f0a6c1d9b10',
      organizationId: '0d3f5e8a-4b1c-4f2e-8a6d-7c9b1e2f3a40',
    };
    const caller = { ...ids };
    const camel = { ...ids, emailAction: 'ein-received', recipientName: 'G', recipients: ['a@example.com'] };
    const snake = {
      user_id: ids.userId,
      company_id: ids.companyId,
      organization_id: ids.organizationId,
      email_action: 'ein-received',
      recipient_name: 'G',
      recipients: ['a@example.com'],
    };
    for (const body of [camel, snake]) {
      assert.doesNotThrow(() => validateWorkflowInput(ein, structuredClone(body), caller));
      assert.equal(published(body), true, JSON.stringify(published.errors));
    }
    // What the gateway refuses for a missing key, the schema refuses too, in either spelling.
    const { email_action: _, ...noAction } = snake;
    assert.throws(() => validateWorkflowInput(ein, structuredClone(noAction), caller), /emailAction/);
    assert.equal(published(noAction), false);
  });

  it("names the interface's error messages in the failures they come with", () => {
    const examples = (path: string, method: string, status: number) =>
      Object.values(
        (
          document.paths[path]![method]!.responses[status]!.content!['application/json'] as {
            examples?: Record<string, { value: { success: boolean; error: string } }>;
          }
        ).examples ?? {},
      ).map((e) => e.value.error);
    const send = (status: number) => examples('/api/email/send', 'post', status);
    for (const message of [
      'missing required fields: to, subject',
      'invalid email address provided.',
      'emails to this domain are not allowed.',
      'email template not found.',
      'email subject is required.',
      'email recipient is required.',
      'too many recipients. maximum is 50.',
      'attachment exceeds maximum size limit.',
      'too many attachments. maximum is 10.',
    ])
      assert.ok(send(400).includes(message), message);
    assert.ok(send(401).includes('unauthorized'));
    assert.ok(send(500).includes('email service not configured.'));
    assert.ok(examples('/api/email/bulk', 'post', 400).includes('too many emails. maximum is 100.'));
    assert.ok(examples('/api/email/status/{email_id}', 'get', 404).includes('email not found.'));
    const welcome = '/api/workflow/send-welcome-email';
    assert.ok(examples(welcome, 'get', 400).includes('runId query parameter is required'));
    assert.ok(examples(welcome, 'get', 404).includes('workflow run not found'));
    assert.ok(examples('/api/workflow/{workflowName}', 'post', 404).includes("workflow 'NAME' not found"));
    // Each example is also in the answer's description, where a reader of the reference page sees it.
    const description = String(
      (document.paths['/api/email/send']!['post']!.responses[400] as { description?: string }).description,
    );
    assert.match(description, /`email template not found\.`/);
    // Node's parser answers 431 on any path, before a route: every operation says so.
    for (const { path, method, op } of operations())
      assert.ok(op.responses['431'], `${method} ${path} documents the 431`);
  });

  it('shows request examples the gateway accepts', () => {
    const examples = (schema: unknown) => (schema as { examples?: unknown[] }).examples ?? [];
    assert.equal(examples(SendBodySchema).length, 1);
    for (const example of examples(SendBodySchema)) {
      assert.doesNotThrow(() => validateSendBody(structuredClone(example), []));
    }
    for (const def of workflows) {
      assert.ok(examples(def.input).length > 0, def.name);
      for (const example of examples(def.input))
        assert.doesNotThrow(() => validateWorkflowInput(def, structuredClone(example), {}), def.name);
    }
  });

  it('gives every failure the { success: false, error } shape', () => {
    const error = document.components.schemas['ErrorResponse'];
    assert.deepEqual(error, {
      type: 'object',
      properties: { success: { const: false, type: 'boolean' }, error: { type: 'string' } },
      required: ['success', 'error'],
    });
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || path === '/ready') continue;
        assert.deepEqual(
          response.content?.['application/json']?.schema,
          { $ref: '#/components/schemas/ErrorResponse' },
          `${method} ${path} ${status}`,
        );
      }
    }
  });

  it('requires an API key (bearer) everywhere except the public routes', () => {
    assert.deepEqual(document.components.securitySchemes['bearerAuth'], {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'mr_…',
      description: (document.components.securitySchemes['bearerAuth'] as { description: string }).description,
    });
    assert.deepEqual(document.security, [{ bearerAuth: [] }]);
    const open = operations()
      .filter(({ op }) => op.security?.length === 0)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    assert.deepEqual(open, [
      'GET /api/email/click/{token}',
      'GET /api/email/track',
      'GET /docs',
      `GET ${REDOC_SCRIPT_PATH}`,
      'GET /health',
      'GET /openapi.json',
      'GET /ready',
      'POST /api/email/track',
      'POST /api/email/webhooks/sendgrid',
    ]);
    for (const { op } of operations()) {
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      assert.equal(op.responses['401'] !== undefined || isPublic, true, op.operationId);
    }
  });

  it('declares the identity headers and Idempotency-Key where the routes read them', () => {
    const headers = (path: string, method: string) =>
      (document.paths[path]![method]!.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    const identity = ['X-Company-Id', 'X-Organization-Id', 'X-User-Id'];
    assert.deepEqual(headers('/api/email/send', 'post'), [...identity, 'Idempotency-Key']);
    assert.deepEqual(headers('/api/email/bulk', 'post'), [...identity, 'Idempotency-Key']);
    assert.deepEqual(headers('/api/email/status/{email_id}', 'get'), identity);
    assert.deepEqual(headers('/api/workflow/send-welcome-email', 'post'), [...identity, 'Idempotency-Key']);
    assert.deepEqual(headers('/api/workflow/send-welcome-email', 'delete'), identity);
    assert.deepEqual(headers('/api/email/track', 'post'), []);
    const runId = document.paths['/api/workflow/send-welcome-email']!['get']!.parameters!.find(
      (p) => p.name === 'runId',
    );
    assert.deepEqual(runId && { in: runId.in, required: runId.required }, { in: 'query', required: true });
  });

  it('declares the answers’ own headers: Retry-After, Idempotent-Replayed, the redirect’s Location', () => {
    const headers = (path: string, method: string, status: number) =>
      Object.keys(document.paths[path]![method]!.responses[String(status)]?.headers ?? {});
    for (const { path, method, op } of operations())
      for (const status of ['429', '503'])
        if (op.responses[status])
          assert.deepEqual(
            headers(path, method, Number(status)),
            ['Retry-After'],
            `${method} ${path} ${status}`,
          );
    assert.deepEqual(headers('/api/email/send', 'post', 200), ['Idempotent-Replayed']);
    assert.deepEqual(headers('/api/email/send', 'post', 500), ['Idempotent-Replayed']);
    assert.deepEqual(headers('/api/email/bulk', 'post', 200), ['Idempotent-Replayed']);
    assert.deepEqual(headers('/api/email/click/{token}', 'get', 302).sort(), ['Cache-Control', 'Location']);
    assert.ok(headers('/api/email/send', 'post', 429).length > 0, 'send declares its 429');
  });
});

describe('GET /openapi.json and GET /docs', () => {
  const app = useEmailApp();

  it('serves the document built from the mounted routes', async () => {
    const res = await fetch(`${app.url}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const served = (await res.json()) as Document;
    assert.equal(served.openapi, '3.1.0');
    assert.deepEqual(Object.keys(served.paths).sort(), Object.keys(document.paths).sort());
  });

  it('serves a reference page whose script comes from the gateway itself, not a CDN', async () => {
    const page = await fetch(`${app.url}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const html = await page.text();
    assert.match(html, /spec-url="\/openapi\.json"/);
    assert.doesNotMatch(html, /(?:src|href)="(?:https?:)?\/\//, 'no external script or stylesheet');
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(scripts, [REDOC_SCRIPT_PATH]);
    const script = await fetch(`${app.url}${scripts[0]}`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    const code = await script.text();
    assert.ok(code.length > 100_000, 'the whole Redoc bundle');
    assert.match(code, /spec-url/, 'it renders <redoc spec-url>');
  });

  it('answers a method a path does not serve with 405 and the methods it does', async () => {
    for (const method of ['TRACE', 'PUT']) {
      const res = await rawRequest(`${app.url}/health`, method);
      assert.equal(res.status, 405, method);
      assert.match(res.allow ?? '', /GET/);
      assert.deepEqual(JSON.parse(res.body), { success: false, error: 'method not allowed' });
    }
    const unknown = await rawRequest(`${app.url}/nowhere`, 'TRACE');
    assert.equal(unknown.status, 404);
    assert.deepEqual(JSON.parse(unknown.body), { success: false, error: 'not found' });
  });
});

/** Any method, TRACE included (fetch refuses it). */
function rawRequest(url: string, method: string): Promise<{ status: number; allow?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
    });
    req.once('error', reject);
    req.end();
  });
}
