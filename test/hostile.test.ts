import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ROUTES } from '../api/app.ts';
import { keyStore } from '../core/api-keys/key-store.ts';
import { connectDatabase, type Database } from '../core/db.ts';
import { SCOPES } from '../core/identity.ts';
import { createLogger } from '../core/logger.ts';
import { RUN_TS, freePort } from '../infra/services.ts';
import { mongoUri, temporalAddress, TEST_SECRET, uniqueName } from './support/env.ts';
import { FakeSendGrid } from './support/fake-sendgrid.ts';

/**
 * The gateway as an attacker meets it: the real server process (api/server.ts,
 * AUTH_MODE=api-key) on real MongoDB and Temporal, under inputs an attacker
 * controls. It must answer everything with a 4xx or 2xx, never 500, never
 * exit, never stop answering /health.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const HOSTILE_REQUESTS = 10_000;
const COMPANY = randomUUID();
const ORGANIZATION = randomUUID();

let server: ChildProcess;
let base = '';
let database: Database;
let fake: FakeSendGrid;
let validKey = '';
let exited: string | undefined;

before(async () => {
  fake = await new FakeSendGrid().start();
  const name = uniqueName('hostile');
  database = await connectDatabase(mongoUri(), name);
  const keys = keyStore(database.db, createLogger('test', { logLevel: 'silent', logPretty: false }));
  validKey = (
    await keys.create({ companyId: COMPANY, organizationId: ORGANIZATION, name: 'hostile', scopes: SCOPES })
  ).plaintext;
  const url = new URL(mongoUri());
  url.pathname = `/${name}`;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [RUN_TS, 'api/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      PORT: String(port),
      MONGODB_URI: url.toString(),
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: uniqueName('hostile'),
      SENDGRID_API_KEY: 'SG.test',
      SENDGRID_BASE_URL: fake.url,
      MAILROOM_SECRET: TEST_SECRET,
      AUTH_MODE: 'api-key',
      SIGNUP_LIMIT_PER_IP: '1000000',
      // Signed webhook on: unsigned and forged events get 401, the production answer.
      SENDGRID_WEBHOOK_PUBLIC_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .publicKey.export({ format: 'der', type: 'spki' })
        .toString('base64'),
      LOG_LEVEL: 'fatal',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  server.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  server.once('exit', (code, signal) => (exited = `exited (code ${code}, signal ${signal}): ${stderr}`));
  for (let i = 0; i < 300 && !exited; i++) {
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway did not start: ${exited ?? 'no answer'}`);
});

after(async () => {
  server?.kill('SIGKILL');
  await fake?.stop();
  await database?.db.dropDatabase().catch(() => undefined);
  await database?.close();
});

/** /health's answer time while `work` runs, sampled every 25 ms. */
async function healthDuring<T>(work: Promise<T>): Promise<{ result: T; worstMs: number; failures: number }> {
  let done = false;
  let worstMs = 0;
  let failures = 0;
  const probe = (async () => {
    while (!done) {
      const started = Date.now();
      const ok = await fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (!ok) failures++;
      worstMs = Math.max(worstMs, Date.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  try {
    return { result: await work, worstMs, failures };
  } finally {
    done = true;
    await probe;
  }
}

function send(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${validKey}`,
      'x-company-id': COMPANY,
      'x-organization-id': ORGANIZATION,
      'x-user-id': randomUUID(),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('inputs that used to freeze or crash the gateway', () => {
  it('1 MB of blanks in html_body (the old </body> search was quadratic) is answered while /health keeps answering', async () => {
    const html = `<html><body>${' '.repeat(1_000_000)}</body `;
    const { result, worstMs, failures } = await healthDuring(
      send('/api/email/send', { to: 'a@example.com', subject: 's', template_id: 'custom', html_body: html }),
    );
    assert.equal(result.status, 200, await result.text());
    assert.equal(failures, 0);
    // Quadratic at this size took minutes; linear takes milliseconds. The bound only separates the two.
    assert.ok(worstMs < 3_000, `/health waited ${worstMs} ms`);
  });

  it('1 MB of comments in html_body (link scanning once searched the rest of the document from each) is answered while /health keeps answering', async () => {
    const html = `<html><body>${'<!---->'.repeat(150_000)}<a href="https://example.com/after">x</a></body></html>`;
    const { result, worstMs, failures } = await healthDuring(
      send('/api/email/send', { to: 'a@example.com', subject: 's', template_id: 'custom', html_body: html }),
    );
    assert.equal(result.status, 200, await result.text());
    assert.equal(failures, 0);
    // Quadratic at this size took minutes; linear takes milliseconds. The bound only separates the two.
    assert.ok(worstMs < 3_000, `/health waited ${worstMs} ms`);
  });

  it('a template variable of blanks (the old tidy was quadratic): bounded, and rendered promptly at the bound', async () => {
    const body = {
      to: 'new.user@example.com',
      subject: 'Welcome',
      template_id: 'welcome',
      template_data: {
        USER_NAME: ' '.repeat(10_000),
        LOGIN_URL: 'https://app.example/l',
        SUPPORT_EMAIL: 'h@example.com',
      },
    };
    const { result, worstMs } = await healthDuring(send('/api/email/send', body));
    assert.equal(result.status, 200, await result.text());
    assert.ok(worstMs < 3_000, `/health waited ${worstMs} ms`);
    const tooLong = { ...body, template_data: { ...body.template_data, USER_NAME: ' '.repeat(1_000_000) } };
    const refused = await send('/api/email/send', tooLong);
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), {
      success: false,
      error: 'invalid field template_data.USER_NAME: must be at most 10000 characters.',
    });
  });

  it('5,000 nested elements in html_body: sent, with a flattened text part, not a 500', async () => {
    const html = `${'<div>'.repeat(5000)}deep${'</div>'.repeat(5000)}`;
    const res = await send('/api/email/send', {
      to: 'deep@example.com',
      subject: 's',
      template_id: 'custom',
      html_body: html,
    });
    assert.equal(res.status, 200, await res.text());
  });

  it('bounds every caller-controlled size with a 400, and oversized bodies per route with a 413', async () => {
    const cases: Array<[string, unknown, number]> = [
      [
        '/api/email/send',
        { to: 'a@example.com', subject: 's', template_id: 'custom', html_body: 'x'.repeat(2_000_001) },
        400,
      ],
      [
        '/api/email/send',
        {
          to: 'a@example.com',
          subject: 's',
          template_id: 'welcome',
          template_data: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`K${i}`, 'v'])),
        },
        400,
      ],
      [
        '/api/email/send',
        {
          to: 'a@example.com',
          subject: 's',
          template_id: 'welcome',
          template_data: { ['K'.repeat(65)]: 'v' },
        },
        400,
      ],
      ['/api/email/track', { view_key: 'x'.repeat(20_000), event_type: 'opened' }, 413],
      ['/api/workflow/send-welcome-email', { userId: 'u'.repeat(70_000) }, 413],
    ];
    for (const [path, body, status] of cases) {
      const res = await send(path, body);
      assert.equal(res.status, status, `${path}: ${(await res.text()).slice(0, 200)}`);
    }
    const webhook = await fetch(`${base}/api/email/webhooks/sendgrid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ event: 'x', pad: 'y'.repeat(6_000_000) }]),
    });
    assert.equal(webhook.status, 413);
  });
});

describe(`${HOSTILE_REQUESTS.toLocaleString('en')} generated hostile requests across every route`, () => {
  it('never answers 500, never exits, and /health answers throughout', async () => {
    const pathOf = (path: string, segment: string) =>
      path.replace(/:[a-z_A-Z]+/g, () => encodeURIComponent(segment));
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '',
        ' ',
        '\u0000',
        '\r\nX-Injected: 1',
        '../../etc/passwd',
        '%00',
        '{{constructor}}',
        '__proto__',
      ),
      fc.uuid(),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.nat({ max: 70_000 }).map((n) => ' '.repeat(n)),
    );
    const headerValue = text.map((value) => value.replace(/[^\x20-\x7e]/g, ''));
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record(
        {
          to: fc.oneof(fc.emailAddress(), text, fc.array(fc.emailAddress(), { maxLength: 60 })),
          subject: text,
          template_id: fc.constantFrom('welcome', 'custom', 'invoice', 'password-reset', 'nope', '__proto__'),
          template_data: fc.dictionary(text, text, { maxKeys: 5 }),
          html_body: text,
          cc: fc.array(fc.emailAddress(), { maxLength: 3 }),
          attachments: fc.array(fc.record({ filename: text, content: text, contentType: text, path: text }), {
            maxLength: 2,
          }),
          emails: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
          view_key: text,
          event_type: fc.constantFrom('opened', 'delivered', 'clicked', 'nope'),
          userId: text,
          companyId: fc.oneof(fc.uuid(), text),
          emailAction: text,
          recipients: fc.array(text, { maxLength: 3 }),
        },
        { requiredKeys: [] },
      ),
    );
    const request = fc.record({
      route: fc.constantFrom(...ROUTES),
      segment: fc.oneof(fc.constantFrom('send-welcome-email', 'send-email-received-ein'), text),
      query: fc.oneof(
        fc.constant(''),
        text.map((t) => `?runId=${encodeURIComponent(t)}&view_key=${encodeURIComponent(t)}`),
      ),
      withKey: fc.oneof(fc.constant('valid'), fc.constant('none'), headerValue),
      company: fc.oneof(fc.constant(COMPANY), fc.constant(''), headerValue),
      user: fc.oneof(fc.uuid(), fc.constant(''), headerValue),
      contentType: fc.constantFrom('application/json', 'text/plain', '', 'application/json; charset=utf-16'),
      body: fc.oneof(
        json.map((j) => JSON.stringify(j)),
        text,
        fc.constant('{"a":'),
      ),
      idempotencyKey: fc.oneof(fc.constant(''), headerValue),
    });

    const samples = fc.sample(request, { numRuns: HOSTILE_REQUESTS, seed: 20261123 });
    const statuses = new Map<number, number>();
    const serverErrors: string[] = [];
    let next = 0;
    const run = async () => {
      while (next < samples.length) {
        const r = samples[next++]!;
        const headers: Record<string, string> = {};
        if (r.contentType) headers['content-type'] = r.contentType;
        if (r.withKey === 'valid') headers['authorization'] = `Bearer ${validKey}`;
        else if (r.withKey !== 'none') headers['authorization'] = r.withKey;
        if (r.company) headers['x-company-id'] = r.company;
        if (r.user) headers['x-user-id'] = r.user;
        if (r.idempotencyKey) headers['idempotency-key'] = r.idempotencyKey;
        const method = r.route.method.toUpperCase();
        const url = `${base}${pathOf(r.route.path, r.segment)}${r.query}`;
        let status = 0;
        const init = { method, headers, ...(method === 'GET' ? {} : { body: r.body }) };
        try {
          // One retry on a network error: a keep-alive socket the server closed as the client
          // reused it is a client-side race, not a server failure. A crash shows in `exited`.
          const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) }).catch(() =>
            fetch(url, { ...init, signal: AbortSignal.timeout(30_000) }),
          );
          status = res.status;
          const answer = await res.text();
          if (status >= 500)
            serverErrors.push(
              `${method} ${url} ${JSON.stringify(headers)} ${r.body.slice(0, 300)} → ${status} ${answer.slice(0, 300)}`,
            );
        } catch (err) {
          serverErrors.push(`${method} ${url} → no answer: ${String(err)}`);
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    const { worstMs, failures } = await healthDuring(Promise.all(Array.from({ length: 8 }, run)));
    console.log(
      `[hostile] ${samples.length} requests; answers by status: ${JSON.stringify(Object.fromEntries(statuses))}; ` +
        `/health worst ${worstMs} ms, ${failures} failures`,
    );
    assert.equal(exited, undefined, exited);
    assert.deepEqual(serverErrors.slice(0, 5), []);
    assert.equal(failures, 0);
    assert.ok((await fetch(`${base}/health`)).ok);
  });
});
