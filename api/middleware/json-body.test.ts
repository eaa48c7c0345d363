import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { SCOPES } from '../../core/identity.ts';
import { invoiceBody, useEmailApp, welcomeBody } from '../../test/support/email-app.ts';

/**
 * Request bodies over real HTTP, AUTH_MODE=api-key: read only after the caller
 * is known, up to the caller's limit counted after decoding, with bounded
 * nesting and value count, whatever the Content-Encoding.
 */
describe('request bodies', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });
  const company = randomUUID();
  const organization = randomUUID();
  let key = '';
  before(async () => {
    // Company-wide: the suppression routes refuse organization-bound keys before reading a body.
    key = (await app.keys.create({ companyId: company, organizationId: null, name: 't', scopes: SCOPES }))
      .plaintext;
  });
  const identity = () => ({
    'content-type': 'application/json',
    'x-company-id': company,
    'x-organization-id': organization,
    'x-user-id': randomUUID(),
  });
  const withKey = () => ({ ...identity(), authorization: `Bearer ${key}` });
  const post = async (path: string, body: string | Buffer, headers: Record<string, string>) => {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const refused = (error: string) => ({ success: false, error });
  const brotli = (text: string) =>
    brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_SIZE_HINT]: text.length } });

  it('a body compressed with gzip, deflate or br is read as the JSON it encodes', async () => {
    const body = JSON.stringify(invoiceBody());
    for (const [coding, encoded] of [
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['br', brotli(body)],
    ] as const) {
      const res = await post('/api/email/send', encoded, { ...withKey(), 'content-encoding': coding });
      assert.equal(res.status, 200, `${coding}: ${JSON.stringify(res.body)}`);
    }
    assert.equal(app.fake.accepted.length, 3);
  });

  it('without credentials a body is read up to 64 KB, counted after decoding; a key lifts that to the route’s limit', async () => {
    // A signup send padded past 64 KB: the pad is an unknown field, which validation would refuse
    // with 400, so a 413 shows the body was refused while it was read.
    const large = JSON.stringify(welcomeBody({ pad: 'x'.repeat(70_000) }));
    for (const [coding, encoded] of [
      ['identity', Buffer.from(large)],
      ['gzip', gzipSync(large)],
      ['br', brotli(large)],
    ] as const) {
      const res = await post('/api/email/send', encoded, { ...identity(), 'content-encoding': coding });
      assert.equal(res.status, 413, coding);
      assert.deepEqual(res.body, refused('request body too large.'));
    }
    const custom = {
      to: 'a@example.com',
      subject: 's',
      template_id: 'custom',
      html_body: 'x'.repeat(70_000),
    };
    const authenticated = await post('/api/email/send', gzipSync(JSON.stringify(custom)), {
      ...withKey(),
      'content-encoding': 'gzip',
    });
    assert.equal(authenticated.status, 200, JSON.stringify(authenticated.body));
  });

  it('with a key, a compressed body may expand 20 times past its first 4 MB: a 44 MB string from 60 KB is 413', async () => {
    // One value of 44 MB of escapes (one string: under every shape bound) gzips to about 60 KB;
    // decoded and parsed it held the event loop 150–210 ms.
    const escapes = JSON.stringify({ ...invoiceBody(), template_data: { X: '\u00e9'.repeat(7_300_000) } });
    const bomb = gzipSync(escapes, { level: 9 });
    assert.ok(bomb.length < 100_000, `${bomb.length} bytes`);
    const res = await post('/api/email/send', bomb, { ...withKey(), 'content-encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.deepEqual(
      res.body,
      refused(
        'compressed request body expands more than 20 times past its first 4 MB. send it uncompressed.',
      ),
    );
    // Repetitive text compressed far beyond 20× still goes through within the first 4 MB.
    const html = `<p>${'Your order has shipped. '.repeat(40_000)}</p>`;
    const custom = JSON.stringify({
      to: 'a@example.com',
      subject: 's',
      template_id: 'custom',
      html_body: html,
    });
    const newsletter = gzipSync(custom);
    assert.ok(custom.length / newsletter.length > 50, `ratio ${custom.length / newsletter.length}`);
    const sent = await post('/api/email/send', newsletter, { ...withKey(), 'content-encoding': 'gzip' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
  });

  it('brotli bombs without credentials (101 bytes of 44 million brackets, of 44 million blanks): refused at once', async () => {
    const brackets = brotli(`{"x":${'['.repeat(22_000_000)}${']'.repeat(22_000_000)}}`);
    assert.ok(brackets.length < 200, `${brackets.length} bytes`);
    const deep = await post('/api/email/send', brackets, { ...identity(), 'content-encoding': 'br' });
    assert.equal(deep.status, 400);
    assert.deepEqual(deep.body, refused('request body nested too deeply. maximum depth is 32.'));
    const blanks = brotli(`{"x":${' '.repeat(44_000_000)}1}`);
    const large = await post('/api/email/send', blanks, { ...identity(), 'content-encoding': 'br' });
    assert.equal(large.status, 413);
    assert.deepEqual(large.body, refused('request body too large.'));
  });

  it('a body that does not decode → 400; a coding other than gzip, deflate, br → 415', async () => {
    const truncated = gzipSync(JSON.stringify(invoiceBody())).subarray(0, 20);
    for (const [coding, body] of [
      ['gzip', Buffer.from('not gzip at all')],
      ['gzip', truncated],
      ['br', Buffer.from('not brotli at all')],
      ['deflate', Buffer.from([1, 2, 3, 4])],
    ] as const) {
      const res = await post('/api/email/send', body, { ...withKey(), 'content-encoding': coding });
      assert.equal(res.status, 400, coding);
      assert.deepEqual(res.body, refused('malformed compressed body.'));
    }
    for (const coding of ['compress', 'gzip, br', 'zstd']) {
      const res = await post('/api/email/send', JSON.stringify(invoiceBody()), {
        ...withKey(),
        'content-encoding': coding,
      });
      assert.equal(res.status, 415, coding);
      assert.deepEqual(res.body, refused('unsupported content encoding. use gzip, deflate, br or none.'));
    }
  });

  it('nesting deeper than 32 → 400 on every route with a body, also with an Idempotency-Key (hashing it overflowed: 500)', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const deep = `{"to":"a@example.com","x":${nested(5_000)}}`;
    for (const path of [
      '/api/email/send',
      '/api/email/bulk',
      '/api/email/track',
      '/api/email/suppressions',
      '/api/email/webhooks/sendgrid',
      '/api/keys',
    ]) {
      const res = await post(path, deep, { ...withKey(), 'idempotency-key': randomUUID() });
      assert.equal(res.status, 400, path);
      assert.deepEqual(res.body, refused('request body nested too deeply. maximum depth is 32.'), path);
    }
    // 32 levels are read (and refused by validation for the unknown field).
    const atBound = await post('/api/email/send', `{"x":${nested(31)}}`, withKey());
    assert.equal(atBound.status, 400);
    assert.notEqual(atBound.body['error'], 'request body nested too deeply. maximum depth is 32.');
  });

  it('more than 100,000 values → 400', async () => {
    const thousand = `[${'{},'.repeat(999)}{}]`;
    const many = `{"emails":[${`${thousand},`.repeat(100)}${thousand}]}`;
    const res = await post('/api/email/bulk', many, withKey());
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, refused('request body has too many values. maximum is 100,000.'));
  });

  it('an array of more than 1,000 items → 400 before any field is validated (99,990 tags held the event loop up to 126 ms)', async () => {
    const at = (n: number) => JSON.stringify({ ...invoiceBody(), tags: Array(n).fill(1) });
    const over = await post('/api/email/send', at(1001), withKey());
    assert.deepEqual(over, {
      status: 400,
      body: refused('request body array too long. maximum is 1,000 items.'),
    });
    const atBound = await post('/api/email/send', at(1000), withKey());
    assert.deepEqual(atBound, {
      status: 400,
      body: refused('invalid field tags: must contain at most 10 item(s).'),
    });
    // Arrays whose limit the interface words say so past the parser's bound too.
    const addresses = JSON.stringify({ ...invoiceBody(), to: Array(5000).fill('a@example.com') });
    assert.deepEqual(
      (await post('/api/email/send', addresses, withKey())).body,
      refused('too many recipients. maximum is 50.'),
    );
    const bulk = JSON.stringify({ emails: Array(1001).fill(invoiceBody()) });
    assert.deepEqual(await post('/api/email/bulk', bulk, withKey()), {
      status: 400,
      body: refused('too many emails. maximum is 100.'),
    });
  });

  it('a declared length over the limit, or a caller without valid credentials, is answered without waiting for the body; the connection is closed soon after', async () => {
    const url = new URL(app.url);
    const answerTo = (head: string) =>
      new Promise<{ answer: string; closedAfterMs: number }>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.write(head));
        let answer = '';
        let answeredAt = 0;
        socket.on('data', (chunk) => {
          answer += chunk.toString();
          if (/\r\n\r\n\{.*\}$/s.test(answer)) answeredAt ||= Date.now();
        });
        // The body is never sent: the server closes the connection some time after answering.
        socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - answeredAt }));
        socket.on('error', reject);
        socket.setTimeout(20_000, () => reject(new Error(`no answer: ${answer}`)));
      });
    const request = (headers: Record<string, string>, length: number) =>
      [
        'POST /api/email/send HTTP/1.1',
        `Host: ${url.host}`,
        `Content-Length: ${length}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        '',
        '',
      ].join('\r\n');
    const cases: Array<[Record<string, string>, number, string]> = [
      [withKey(), 46 * 1024 * 1024, '413'],
      [identity(), 65 * 1024, '413'],
      [{ ...identity(), authorization: 'Bearer mr_nonsense' }, 1024 * 1024, '401'],
    ];
    for (const [headers, length, status] of cases) {
      const { answer, closedAfterMs } = await answerTo(request(headers, length));
      assert.match(answer, new RegExp(`^HTTP/1.1 ${status} `), answer);
      assert.ok(closedAfterMs < 10_000, `closed ${closedAfterMs} ms after answering`);
    }
  });
});
