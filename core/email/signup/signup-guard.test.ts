import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';
import { SAMPLE_DATA } from '../../../templates/samples.ts';

/**
 * Unauthenticated sends of the signup templates (password-reset, welcome,
 * verification), over HTTP against a real gateway in AUTH_MODE=api-key:
 * narrowed to what a signup flow needs, so the gateway is no anonymous
 * relay. A key lifts every narrowing. (The rate limits: signup-limits.test.ts.)
 */

const anonymous = {};
const unique = () => `signup-${randomUUID()}@example.com`;

/** A send body of a signup template: its sample variables with links on https://app.example, `data` on top. */
function signupBody(templateId: string, data: Record<string, string>, extra: Record<string, unknown> = {}) {
  const sample = Object.entries(SAMPLE_DATA[templateId]!).map(([name, value]) => [
    name,
    value.replace('https://app.mailroom.example', 'https://app.example'),
  ]);
  return {
    to: unique(),
    subject: 'Signup',
    template_id: templateId,
    template_data: { ...Object.fromEntries(sample), ...data },
    ...extra,
  };
}

describe('unauthenticated signup sends', () => {
  const app = useEmailApp({
    env: {
      AUTH_MODE: 'api-key',
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SUPPORT_EMAIL: 'support@mailroom.test',
    },
  });

  /** The one message the fake provider accepted since the last reset: headers and parts. */
  const delivered = () => {
    assert.equal(app.fake.accepted.length, 1);
    const body = app.fake.accepted[0]!.body;
    const part = (type: string) => body.content.find((c) => c.type === type)!.value;
    return { body, subject: body.subject, html: part('text/html'), text: part('text/plain') };
  };

  it('sends one welcome email to one recipient with links on the allowed origin', async () => {
    const res = await app.post('/api/email/send', welcomeBody({ to: unique() }), anonymous);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(app.fake.accepted.length, 1);
  });

  it('refuses what a phisher would use, each with a clear 400, and sends nothing', async () => {
    const attachment = { filename: 'a.txt', content: Buffer.from('hi').toString('base64') };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: [unique(), unique()] }, 'unauthenticated sends take exactly one recipient in to.'],
      [{ cc: unique() }, 'cc is not allowed without authentication.'],
      [{ bcc: [unique()] }, 'bcc is not allowed without authentication.'],
      [{ attachments: [attachment] }, 'attachments is not allowed without authentication.'],
      [{ from: 'Security <security@bank.example>' }, 'from is not allowed without authentication.'],
      [{ reply_to: 'thief@evil.example' }, 'reply_to is not allowed without authentication.'],
    ];
    for (const [patch, error] of cases) {
      const res = await app.post('/api/email/send', welcomeBody({ to: unique(), ...patch }), anonymous);
      assert.equal(res.status, 400, JSON.stringify(patch));
      assert.deepEqual(res.body, { success: false, error });
    }
    assert.equal(app.fake.accepted.length, 0);
  });

  it('refuses link variables that leave the allowed origins', async () => {
    for (const url of [
      'https://evil.example/login',
      'https://app.example.evil.example/login',
      'http://app.example/login',
    ]) {
      const res = await app.post('/api/email/send', signupBody('welcome', { LOGIN_URL: url }), anonymous);
      assert.equal(res.status, 400, url);
      assert.deepEqual(res.body, {
        success: false,
        error: 'LOGIN_URL must point at an allowed origin (SIGNUP_LINK_ORIGINS) without authentication.',
      });
    }
    assert.equal(app.fake.accepted.length, 0);
  });

  it('the attack of issue 20: subject, SUPPORT_EMAIL and a name with a link are not the attacker’s to write', async () => {
    const attack = {
      to: { email: unique(), name: 'Action required' },
      subject: 'Your account is locked - verify at https://evil.example/login',
      template_id: 'welcome',
      template_data: {
        USER_NAME: 'Your account is locked. Verify now at https://evil.example/login',
        LOGIN_URL: 'https://app.example/login',
        SUPPORT_EMAIL: 'helpdesk@evil.example',
      },
    };
    const refused = await app.post('/api/email/send', attack, anonymous);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, {
      success: false,
      error:
        'USER_NAME must be plain text without authentication: at most 64 characters, no links, @ or line breaks.',
    });
    assert.equal(app.fake.accepted.length, 0);

    // With a plain name it goes out, but with the template's subject and the configured support address.
    const res = await app.post(
      '/api/email/send',
      { ...attack, template_data: { ...attack.template_data, USER_NAME: 'Jordan' } },
      anonymous,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { subject, html, text } = delivered();
    assert.equal(subject, 'Welcome to Mailroom, Jordan');
    for (const part of [subject, html, text]) assert.equal(part.includes('evil.example'), false, part);
    assert.ok(html.includes('mailto:support@mailroom.test') && text.includes('support@mailroom.test'));
  });

  it('takes configuration variables from the configuration: SUPPORT_EMAIL may be left out', async () => {
    const { SUPPORT_EMAIL: _left, ...data } = SAMPLE_DATA['welcome']!;
    const res = await app.post(
      '/api/email/send',
      {
        to: unique(),
        subject: 'Hi',
        template_id: 'welcome',
        template_data: { ...data, LOGIN_URL: 'https://app.example/in' },
      },
      anonymous,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(delivered().text.includes('support@mailroom.test'));
  });

  it('holds names, other text variables and the display name to plain words', async () => {
    const refused: Array<[Record<string, unknown>, string]> = [
      [signupBody('welcome', { USER_NAME: 'Jordan @ support' }), 'USER_NAME'],
      [signupBody('welcome', { USER_NAME: 'see www.evil.example' }), 'USER_NAME'],
      [signupBody('welcome', { USER_NAME: 'evil。example' }), 'USER_NAME'],
      [signupBody('welcome', { USER_NAME: 'Jordan\nCall +1 555 0100 now' }), 'USER_NAME'],
      [signupBody('welcome', { USER_NAME: 'evil\u200b.example' }), 'USER_NAME'],
      [signupBody('welcome', { USER_NAME: 'J'.repeat(65) }), 'USER_NAME'],
      [
        signupBody('password-reset', { EXPIRY_TIME: '30 minutes, or go to evil.example/reset' }),
        'EXPIRY_TIME',
      ],
      [signupBody('password-reset', { REQUEST_LOCATION: 'x'.repeat(101) }), 'REQUEST_LOCATION'],
      [signupBody('verification', { VERIFICATION_CODE: 'http://a' }), 'VERIFICATION_CODE'],
      [welcomeBody({ to: { email: unique(), name: 'Support at evil.example' } }), 'to.name'],
      [welcomeBody({ to: { email: unique(), name: 'help@evil.example' } }), 'to.name'],
      [welcomeBody({ to: { email: unique(), name: 'help\uFF20evil' } }), 'to.name'],
    ];
    for (const [body, field] of refused) {
      const res = await app.post('/api/email/send', body, anonymous);
      assert.equal(res.status, 400, JSON.stringify(body));
      const max = field === 'USER_NAME' || field === 'to.name' ? 64 : 100;
      assert.deepEqual(res.body, {
        success: false,
        error: `${field} must be plain text without authentication: at most ${max} characters, no links, @ or line breaks.`,
      });
    }
    assert.equal(app.fake.accepted.length, 0);
    // What real signup flows send passes: names with accents, hyphens and initials; IPs; places.
    for (const body of [
      signupBody(
        'welcome',
        { USER_NAME: 'María-José O’Neil J.R.' },
        { to: { email: unique(), name: 'Dr. Ada Lovelace' } },
      ),
      signupBody('password-reset', { REQUEST_IP: '2001:db8::42', REQUEST_LOCATION: 'St. Louis, MO' }),
      signupBody('verification', { RESET_URL: 'ignored: undeclared variables are dropped' }),
    ]) {
      const res = await app.post('/api/email/send', body, anonymous);
      assert.equal(res.status, 200, `${JSON.stringify(body)} ${JSON.stringify(res.body)}`);
    }
  });

  it('the link of issue 20 (a backslash before @) is refused, as for every caller', async () => {
    const res = await app.post(
      '/api/email/send',
      signupBody('verification', { VERIFICATION_URL: 'https://app.example\\@evil.example/' }),
      anonymous,
    );
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error: 'invalid field template_data.VERIFICATION_URL: must not contain a backslash before its query.',
    });
    assert.equal(app.fake.accepted.length, 0);
  });

  it('with a key, none of these narrowings apply', async () => {
    const company = randomUUID();
    const { plaintext } = await app.keys.create({ companyId: company, name: 't', scopes: ['email:send'] });
    const body = welcomeBody({
      to: [{ email: unique(), name: 'Team at app.example' }, unique()],
      cc: unique(),
      reply_to: 'support@app.example',
      subject: 'Welcome to the team',
    });
    const data = body['template_data'] as Record<string, string>;
    data['LOGIN_URL'] = 'https://elsewhere.example/login';
    data['USER_NAME'] = 'ops@app.example';
    for (let i = 0; i < 5; i++) {
      const res = await app.post('/api/email/send', body, { authorization: `Bearer ${plaintext}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const sent = app.fake.accepted[0]!.body;
    assert.equal(sent.subject, 'Welcome to the team');
  });

  it('anonymous POST /api/email/bulk of signup templates: each item narrowed and counted as its own send', async () => {
    const to = unique();
    const res = await app.post(
      '/api/email/bulk',
      {
        emails: [
          { id: 'ok', ...welcomeBody({ to }) },
          { id: 'cc', ...welcomeBody({ to: unique(), cc: unique() }) },
          // The same recipient again and again: its limit (10 an hour) holds across the bulk.
          ...Array.from({ length: 10 }, (_, i) => ({ id: `again-${i}`, ...welcomeBody({ to }) })),
        ],
        batchDelay: 0,
      },
      anonymous,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const results = res.body['results'] as Array<{ id: string; success: boolean; error?: string }>;
    assert.equal(results[0]!.id, 'ok');
    assert.equal(results[0]!.success, true);
    assert.deepEqual(results[1], {
      id: 'cc',
      success: false,
      error: 'cc is not allowed without authentication.',
    });
    const again = results.slice(2);
    assert.equal(again.filter((r) => r.success).length, 9);
    assert.deepEqual(
      again.filter((r) => !r.success).map((r) => r.error),
      ['too many emails. try again later.'],
    );
    assert.equal(res.body['sent'], 10);
    assert.equal(app.fake.accepted.length, 10);
    assert.ok(app.fake.accepted.every((a) => a.body.personalizations[0]!.to[0]!.email === to));
  });

  it('anonymous POST /api/email/bulk with any other template is 401; nothing is sent', async () => {
    for (const emails of [
      [welcomeBody({ to: unique() }), { ...welcomeBody({ to: unique() }), template_id: 'invoice' }],
      [{ ...welcomeBody({ to: unique() }), template_id: 'no-such-template' }],
      [welcomeBody({ to: unique() }), 'not an item'],
      [],
    ]) {
      const res = await app.post('/api/email/bulk', { emails, batchDelay: 0 }, anonymous);
      assert.equal(res.status, 401, JSON.stringify(emails));
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
    }
    assert.equal(app.fake.accepted.length, 0);
  });
});

describe('unauthenticated signup links never lead into the click redirect', () => {
  /** A default gateway: SIGNUP_LINK_ORIGINS unset (an empty value is unset). */
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key', SIGNUP_LINK_ORIGINS: '' } });

  /** What any key holder can do: mail themselves a link and take its click URL out of the email. */
  async function mintClickLink(target: string): Promise<string> {
    const company = randomUUID();
    const { plaintext } = await app.keys.create({ companyId: company, name: 'k', scopes: ['email:send'] });
    const res = await app.post(
      '/api/email/send',
      { to: 'me@example.com', subject: 'x', template_id: 'custom', html_body: `<a href="${target}">x</a>` },
      {
        authorization: `Bearer ${plaintext}`,
        'x-company-id': company,
        'x-organization-id': randomUUID(),
        'x-user-id': randomUUID(),
      },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const html = app.fake.accepted.at(-1)!.body.content.find((c) => c.type === 'text/html')!.value;
    const link = /http:\/\/mailroom\.test\/api\/email\/click\/[\w.-]+/.exec(html)?.[0];
    assert.ok(link, html);
    // The link is a working redirect to the attacker's page.
    const followed = await fetch(link.replace('http://mailroom.test', app.url), { redirect: 'manual' });
    assert.equal(followed.headers.get('location'), target);
    app.fake.reset();
    return link;
  }

  it('the attack of issue 20: a password reset whose button is a click link to evil.example is refused', async () => {
    const link = await mintClickLink('https://evil.example/login');
    const res = await app.post(
      '/api/email/send',
      signupBody('password-reset', { RESET_URL: link }),
      anonymous,
    );
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error:
        'unauthenticated signup sends are off: the gateway allows their links on no origin (SIGNUP_LINK_ORIGINS is not set).',
    });
    assert.equal(app.fake.accepted.length, 0);
  });

  it('unset, SIGNUP_LINK_ORIGINS allows no origin, the gateway’s own neither', async () => {
    for (const url of ['http://mailroom.test/reset?token=1', 'https://app.example/reset']) {
      const res = await app.post(
        '/api/email/send',
        signupBody('password-reset', { RESET_URL: url }),
        anonymous,
      );
      assert.equal(res.status, 400, url);
    }
    assert.equal(app.fake.accepted.length, 0);
  });
});

describe('unauthenticated signup links: the gateway’s origin listed in SIGNUP_LINK_ORIGINS', () => {
  const app = useEmailApp({
    env: { AUTH_MODE: 'api-key', SIGNUP_LINK_ORIGINS: 'https://app.example,http://mailroom.test' },
  });

  it('refuses the click redirect however the path is spelt, and allows the rest of the origin', async () => {
    const token = 'AQ.AA';
    for (const path of [
      `/api/email/click/${token}`,
      `/API/Email/Click/${token}`,
      `/api//email///click/${token}`,
      `/api/email/%63lick/${token}`,
      `/api%2Femail%2Fclick/${token}`,
      `/x/../api/email/click/${token}`,
      `/mailroom/api/email/click/${token}`,
    ]) {
      for (const origin of ['http://mailroom.test', 'https://app.example']) {
        const res = await app.post(
          '/api/email/send',
          signupBody('password-reset', { RESET_URL: `${origin}${path}` }),
          anonymous,
        );
        assert.equal(res.status, 400, `${origin}${path}`);
        assert.deepEqual(res.body, {
          success: false,
          error: 'RESET_URL must not point at a click redirect (/api/email/click/) without authentication.',
        });
      }
    }
    assert.equal(app.fake.accepted.length, 0);
    const ok = await app.post(
      '/api/email/send',
      signupBody('password-reset', { RESET_URL: 'http://mailroom.test/reset?token=1' }),
      anonymous,
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});

describe('unauthenticated signup links behind a trusted proxy, SIGNUP_LINK_ORIGINS unset', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'trusted-headers', SIGNUP_LINK_ORIGINS: '' } });

  it('may point at any http(s) origin, as the interface lets signup templates go without authentication', async () => {
    const res = await app.post(
      '/api/email/send',
      signupBody('password-reset', { RESET_URL: 'https://anywhere.example/reset?token=1' }),
      anonymous,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(app.fake.accepted.length, 1);
    // Not click-tracked: no anonymous caller gets a gateway-signed redirect to a URL it chose.
    const html = app.fake.accepted[0]!.body.content.find((c) => c.type === 'text/html')!.value;
    assert.ok(html.includes('href="https://anywhere.example/reset?token=1"'), html);
    assert.doesNotMatch(html, /\/api\/email\/click\//);
  });

  it('an authenticated send of the same template is still click-tracked', async () => {
    const res = await app.post(
      '/api/email/send',
      signupBody('password-reset', { RESET_URL: 'https://anywhere.example/reset?token=2' }),
      { 'x-company-id': randomUUID(), 'x-organization-id': randomUUID(), 'x-user-id': randomUUID() },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const html = app.fake.accepted.at(-1)!.body.content.find((c) => c.type === 'text/html')!.value;
    assert.match(html, /\/api\/email\/click\/[\w-]+\.[\w-]+/);
  });

  it('never into the click redirect, and still narrowed (one recipient)', async () => {
    const redirect = await app.post(
      '/api/email/send',
      signupBody('password-reset', { RESET_URL: 'http://mailroom.test/api/email/click/abc.def' }),
      anonymous,
    );
    assert.equal(redirect.status, 400, JSON.stringify(redirect.body));
    const two = await app.post(
      '/api/email/send',
      signupBody('password-reset', {}, { to: ['a@example.com', 'b@example.com'] }),
      anonymous,
    );
    assert.equal(two.status, 400, JSON.stringify(two.body));
    assert.equal(app.fake.accepted.length, 0);
  });
});
