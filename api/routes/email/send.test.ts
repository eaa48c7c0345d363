import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { STATUS_RANK, statusOf, type EmailRecord } from '../../../core/email/records/record.ts';
import { AUTH, COMPANY, invoiceBody, useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /api/email/send', () => {
  const app = useEmailApp();

  const status = async (emailId: string) =>
    (await app.get(`/api/email/status/${emailId}`)).body['data'] as Record<string, unknown>;

  describe('success', () => {
    it('sends a template email: 200 with email_id, provider_id, message; record sent; SendGrid got it', async () => {
      const res = await app.post(
        '/api/email/send',
        invoiceBody({ resource_type_ref: 'invoice', resource_id_ref: 'inv_1' }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body['success'], true);
      assert.match(String(res.body['email_id']), UUID_RE);
      assert.equal(typeof res.body['message'], 'string');
      assert.equal(app.fake.accepted.length, 1);
      const mail = app.fake.accepted[0]!;
      assert.equal(res.body['provider_id'], mail.messageId);
      assert.equal(mail.headers.authorization, 'Bearer SG.test');
      assert.deepEqual(mail.body.personalizations[0]!.to, [{ email: 'customer@example.com' }]);
      assert.equal(mail.body.subject, 'Your invoice INV-1');
      assert.deepEqual(mail.body.from, { email: 'no-reply@mailroom.test', name: 'Mailroom' });
      assert.deepEqual(mail.body.custom_args, { email_id: res.body['email_id'] });
      const types = mail.body.content.map((c) => c.type);
      assert.deepEqual(types, ['text/plain', 'text/html']);
      const html = mail.body.content.find((c) => c.type === 'text/html')!.value;
      assert.match(html, /INV-1/);
      assert.match(
        html,
        /<img[^>]+src="http:\/\/mailroom\.test\/api\/email\/track\?view_key=[A-Za-z0-9_-]{46}"[^>]*>/,
      );

      const data = await status(String(res.body['email_id']));
      assert.equal(data['status'], 'sent');
      assert.equal(data['recipient_email'], 'customer@example.com');
      assert.equal(data['template_id'], 'invoice');
      assert.equal(data['resource_type_ref'], 'invoice');
      assert.equal(data['resource_id_ref'], 'inv_1');
    });

    it('accepts all four recipient forms and reaches SendGrid with names', async () => {
      const forms: Array<[unknown, Array<{ email: string; name?: string }>]> = [
        ['one@example.com', [{ email: 'one@example.com' }]],
        [
          { email: 'named@example.com', name: 'Named Person' },
          [{ email: 'named@example.com', name: 'Named Person' }],
        ],
        // A recipient's name is the recipient's own: an address there is the product's to send.
        [
          { email: 'user@example.com', name: 'user@example.com' },
          [{ email: 'user@example.com', name: 'user@example.com' }],
        ],
        [
          ['a@example.com', 'b@example.com'],
          [{ email: 'a@example.com' }, { email: 'b@example.com' }],
        ],
        [
          [
            { email: 'c@example.com', name: 'C Person' },
            { email: 'd@example.com', name: 'D Person' },
          ],
          [
            { email: 'c@example.com', name: 'C Person' },
            { email: 'd@example.com', name: 'D Person' },
          ],
        ],
      ];
      for (const [to, expected] of forms) {
        app.fake.reset();
        const res = await app.post('/api/email/send', invoiceBody({ to }));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(app.fake.accepted[0]!.body.personalizations[0]!.to, expected);
        const data = await status(String(res.body['email_id']));
        assert.equal(data['recipient_email'], expected[0]!.email);
        assert.equal(data['recipient_name'], expected[0]!.name ?? '');
      }
    });

    it('quotes names with a comma or semicolon for SendGrid, which drops such messages otherwise', async () => {
      const res = await app.post(
        '/api/email/send',
        invoiceBody({
          to: { email: 'jane@example.com', name: 'Doe, Jane' },
          cc: [
            { email: 'd@example.com', name: 'Semi; Colon' },
            { email: 'e@example.com', name: 'Plain Name' },
          ],
          bcc: { email: 'f@example.com', name: 'Acme "Billing", Inc.' },
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const sent = app.fake.accepted[0]!.body.personalizations[0]!;
      assert.deepEqual(sent.to, [{ email: 'jane@example.com', name: '"Doe, Jane"' }]);
      assert.deepEqual(sent.cc, [
        { email: 'd@example.com', name: '"Semi; Colon"' },
        { email: 'e@example.com', name: 'Plain Name' },
      ]);
      assert.deepEqual(sent.bcc, [{ email: 'f@example.com', name: '"Acme \\"Billing\\", Inc."' }]);
      // The record keeps the name as the caller gave it.
      const data = await status(String(res.body['email_id']));
      assert.equal(data['recipient_name'], 'Doe, Jane');
    });

    it('sends cc and bcc given as a string or an array, and reply_to / from', async () => {
      let res = await app.post(
        '/api/email/send',
        invoiceBody({
          cc: 'cc@example.com',
          bcc: 'bcc@example.com',
          reply_to: 'billing@acme.example',
          from: 'Acme Billing <billing@acme.example>',
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      let body = app.fake.accepted[0]!.body;
      assert.deepEqual(body.personalizations[0]!.cc, [{ email: 'cc@example.com' }]);
      assert.deepEqual(body.personalizations[0]!.bcc, [{ email: 'bcc@example.com' }]);
      assert.deepEqual(body.reply_to, { email: 'billing@acme.example' });
      assert.deepEqual(body.from, { email: 'billing@acme.example', name: 'Acme Billing' });

      app.fake.reset();
      res = await app.post(
        '/api/email/send',
        invoiceBody({
          cc: ['cc1@example.com', { email: 'cc2@example.com', name: 'Cc Two' }],
          bcc: ['bcc1@example.com', 'bcc2@example.com'],
          from: 'plain@acme.example',
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      body = app.fake.accepted[0]!.body;
      assert.deepEqual(body.personalizations[0]!.cc, [
        { email: 'cc1@example.com' },
        { email: 'cc2@example.com', name: 'Cc Two' },
      ]);
      assert.deepEqual(body.personalizations[0]!.bcc, [
        { email: 'bcc1@example.com' },
        { email: 'bcc2@example.com' },
      ]);
      assert.deepEqual(body.from, { email: 'plain@acme.example' });
    });

    it('drops an address repeated across to/cc/bcc (SendGrid refuses duplicates)', async () => {
      const res = await app.post(
        '/api/email/send',
        invoiceBody({ to: 'x@example.com', cc: ['X@example.com', 'y@example.com'] }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(app.fake.accepted[0]!.body.personalizations[0]!.cc, [{ email: 'y@example.com' }]);
    });

    it('counts the subject in characters: 200 emoji (400 UTF-16 units) are sent', async () => {
      const subject = '\u{1F600}'.repeat(200);
      const res = await app.post('/api/email/send', invoiceBody({ subject }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(app.fake.accepted[0]!.body.subject, subject);
    });

    it('sends tags as SendGrid categories', async () => {
      const res = await app.post('/api/email/send', invoiceBody({ tags: ['billing', 'monthly'] }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(app.fake.accepted[0]!.body.categories, ['billing', 'monthly']);
    });

    it('sends base64 attachments with filename, type and disposition', async () => {
      const content = Buffer.from('%PDF-1.4 hello').toString('base64');
      const res = await app.post(
        '/api/email/send',
        invoiceBody({ attachments: [{ filename: 'invoice.pdf', content, contentType: 'application/pdf' }] }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(app.fake.accepted[0]!.body.attachments, [
        { filename: 'invoice.pdf', content, type: 'application/pdf', disposition: 'attachment' },
      ]);
    });

    it('escapes template variables in the HTML SendGrid receives', async () => {
      const res = await app.post(
        '/api/email/send',
        invoiceBody({
          template_data: {
            ...(invoiceBody()['template_data'] as object),
            RECIPIENT_NAME: '<script>alert(1)</script>',
          },
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const html = app.fake.accepted[0]!.body.content.find((c) => c.type === 'text/html')!.value;
      assert.doesNotMatch(html, /<script>/);
      assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    });

    it('shows a link variable only as the WHATWG parser serialises it, in the HTML and the text part', async () => {
      const data = {
        ...(invoiceBody()['template_data'] as object),
        INVOICE_URL: 'HTTPS://Acme.Example:443/i/./1',
      };
      const res = await app.post(
        '/api/email/send',
        invoiceBody({ template_data: data, track_clicks: false }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const content = app.fake.accepted[0]!.body.content;
      for (const type of ['text/html', 'text/plain']) {
        const part = content.find((c) => c.type === type)!.value;
        assert.ok(part.includes('https://acme.example/i/1'), type);
        assert.equal(part.includes('Acme.Example'), false, type);
      }
    });

    it('sends the custom template with the caller’s html_body and the tracking pixel', async () => {
      const res = await app.post('/api/email/send', {
        to: 'c@example.com',
        subject: 'Custom',
        template_id: 'custom',
        html_body: '<p>Hello <b>there</b></p>',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const html = app.fake.accepted[0]!.body.content.find((c) => c.type === 'text/html')!.value;
      assert.match(html, /<p>Hello <b>there<\/b><\/p>/);
      assert.match(html, /api\/email\/track\?view_key=/);
    });

    it('lets signup templates through without auth headers', async () => {
      const res = await app.post('/api/email/send', welcomeBody(), {});
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(app.fake.accepted.length, 1);
    });
  });

  describe('authentication', () => {
    it('401 unauthorized without headers for a template that requires auth', async () => {
      const res = await app.post('/api/email/send', invoiceBody(), {});
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
      assert.equal(app.fake.received.length, 0);
    });

    it('401 when any one of the three headers is missing', async () => {
      for (const drop of Object.keys(AUTH)) {
        const headers: Record<string, string> = { ...AUTH };
        delete headers[drop];
        const res = await app.post('/api/email/send', invoiceBody(), headers);
        assert.equal(res.status, 401, drop);
        assert.equal(res.body['error'], 'unauthorized');
      }
    });

    it('401 when a header is not a UUID, even on a signup template', async () => {
      let res = await app.post('/api/email/send', invoiceBody(), { ...AUTH, 'x-company-id': 'acme' });
      assert.equal(res.status, 401);
      assert.equal(res.body['error'], 'unauthorized');
      res = await app.post('/api/email/send', welcomeBody(), { 'x-user-id': 'not-a-uuid' });
      assert.equal(res.status, 401);
      assert.equal(res.body['error'], 'unauthorized');
      assert.equal(app.fake.received.length, 0);
    });
  });

  describe('validation (400, nothing sent)', () => {
    const cases: Array<[string, Record<string, unknown> | unknown, string]> = [
      [
        'missing to',
        (() => {
          const b = invoiceBody();
          delete b['to'];
          return b;
        })(),
        'email recipient is required.',
      ],
      ['empty to array', invoiceBody({ to: [] }), 'email recipient is required.'],
      ['blank to', invoiceBody({ to: '  ' }), 'email recipient is required.'],
      [
        'missing subject',
        (() => {
          const b = invoiceBody();
          delete b['subject'];
          return b;
        })(),
        'email subject is required.',
      ],
      ['blank subject', invoiceBody({ subject: '   ' }), 'email subject is required.'],
      [
        'missing template_id',
        (() => {
          const b = invoiceBody();
          delete b['template_id'];
          return b;
        })(),
        'missing required fields: template_id',
      ],
      ['unknown template', invoiceBody({ template_id: 'nope' }), 'email template not found.'],
      ['bad address', invoiceBody({ to: 'not-an-email' }), 'invalid email address provided.'],
      [
        'bad address in a list',
        invoiceBody({ to: ['ok@example.com', 'bad@'] }),
        'invalid email address provided.',
      ],
      [
        'bad named address',
        invoiceBody({ to: { email: 'nope', name: 'N' } }),
        'invalid email address provided.',
      ],
      ['IP address as the domain', invoiceBody({ to: 'a@127.0.0.1' }), 'invalid email address provided.'],
      ['bad cc', invoiceBody({ cc: 'bad' }), 'invalid email address provided.'],
      ['bad bcc', invoiceBody({ bcc: ['bad'] }), 'invalid email address provided.'],
      ['bad reply_to', invoiceBody({ reply_to: 'bad' }), 'invalid email address provided.'],
      ['bad from', invoiceBody({ from: 'Acme <bad>' }), 'invalid email address provided.'],
      [
        'CR/LF in address',
        invoiceBody({ to: 'a@example.com\r\nBcc: evil@example.com' }),
        'invalid email address provided.',
      ],
      [
        'CR/LF in a name',
        invoiceBody({ to: { email: 'a@example.com', name: 'A\r\nBcc: evil@example.com' } }),
        'invalid email address provided.',
      ],
      [
        'CR/LF in from name',
        invoiceBody({ from: 'Acme\nX <billing@acme.example>' }),
        'invalid email address provided.',
      ],
      // At either end too: refused, not trimmed away.
      [
        'CR/LF around an address',
        invoiceBody({ to: '\r\na@example.com\r\n' }),
        'invalid email address provided.',
      ],
      ['LF after reply_to', invoiceBody({ reply_to: 'r@example.com\n' }), 'invalid email address provided.'],
      [
        'CR/LF around a cc name',
        invoiceBody({ cc: [{ email: 'c@example.com', name: '\r\nC' }] }),
        'invalid email address provided.',
      ],
      [
        'CR/LF before from',
        invoiceBody({ from: '\r\nBcc: e@example.com\r\n <billing@acme.example>' }),
        'invalid email address provided.',
      ],
      [
        'CR/LF in subject',
        invoiceBody({ subject: 'Hi\r\nBcc: evil@example.com' }),
        'email subject must not contain line breaks.',
      ],
      [
        'NUL in subject',
        invoiceBody({ subject: 'Invoice\u0000 ready' }),
        'email subject must not contain control characters.',
      ],
      [
        'escape character in subject',
        invoiceBody({ subject: 'Invoice \u001b[31m' }),
        'email subject must not contain control characters.',
      ],
      [
        'NEL (a C1 control) in subject',
        invoiceBody({ subject: 'Invoice\u0085Bcc: evil@example.com' }),
        'email subject must not contain control characters.',
      ],
      [
        'a Unicode line separator in subject',
        invoiceBody({ subject: 'Invoice\u2028Bcc: evil@example.com' }),
        'email subject must not contain control characters.',
      ],
      [
        'NEL in a display name',
        invoiceBody({ to: { email: 'a@example.com', name: 'A\u0085B' } }),
        'invalid email address provided.',
      ],
      [
        'control character in a tag (a SendGrid category)',
        invoiceBody({ tags: ['billing', 'q\u0000'] }),
        'tags must not contain control characters.',
      ],
      [
        'NUL in a display name',
        invoiceBody({ to: { email: 'a@example.com', name: 'A\u0000' } }),
        'invalid email address provided.',
      ],
      [
        'NUL in reply_to',
        invoiceBody({ reply_to: 'Desk\u0000 <desk@example.com>' }),
        'invalid email address provided.',
      ],
      [
        'CR/LF in an attachment filename',
        invoiceBody({ attachments: [{ filename: 'a.txt\r\nX-Evil: 1', content: 'aGk=' }] }),
        'attachments[0] filename and contentType must not contain control characters.',
      ],
      [
        'a right-to-left override in an attachment filename (invoice\u202efdp.exe shows as invoiceexe.pdf)',
        invoiceBody({
          attachments: [
            { filename: 'invoice\u202efdp.exe', contentType: 'application/pdf', content: 'aGk=' },
          ],
        }),
        'attachments[0] filename must not contain invisible or bidirectional formatting characters.',
      ],
      [
        'a zero-width space and an isolate in an attachment filename',
        invoiceBody({ attachments: [{ filename: 'invoice\u200b.pdf\u2066.exe', content: 'aGk=' }] }),
        'attachments[0] filename must not contain invisible or bidirectional formatting characters.',
      ],
      [
        'NUL in an attachment contentType',
        invoiceBody({
          attachments: [{ filename: 'a.txt', contentType: 'text/plain\u0000', content: 'aGk=' }],
        }),
        'attachments[0] filename and contentType must not contain control characters.',
      ],
      [
        'CR/LF in resource_id_ref',
        invoiceBody({ resource_id_ref: '1001\r\nX-Evil: 1' }),
        'invalid field resource_id_ref: must not contain control characters.',
      ],
      [
        'NUL in locale',
        invoiceBody({ locale: 'en-us\u0000' }),
        'invalid field locale: must not contain control characters.',
      ],
      [
        'subject over 200',
        invoiceBody({ subject: 'x'.repeat(201) }),
        'email subject exceeds maximum length of 200 characters.',
      ],
      [
        'subject of 201 characters outside the BMP',
        invoiceBody({ subject: '\u{1F600}'.repeat(201) }),
        'email subject exceeds maximum length of 200 characters.',
      ],
      [
        'blocked domain',
        invoiceBody({ to: 'someone@blocked.example' }),
        'emails to this domain are not allowed.',
      ],
      [
        'blocked subdomain, any case',
        invoiceBody({ cc: 'someone@Mail.BLOCKED.example' }),
        'emails to this domain are not allowed.',
      ],
      [
        '51 recipients',
        invoiceBody({
          to: Array.from({ length: 30 }, (_, i) => `t${i}@example.com`),
          bcc: Array.from({ length: 21 }, (_, i) => `b${i}@example.com`),
        }),
        'too many recipients. maximum is 50.',
      ],
      [
        '11 attachments',
        invoiceBody({
          attachments: Array.from({ length: 11 }, (_, i) => ({ filename: `f${i}.txt`, content: 'aGk=' })),
        }),
        'too many attachments. maximum is 10.',
      ],
      [
        'attachment over 10 MB',
        invoiceBody({
          attachments: [
            { filename: 'big.bin', content: Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64') },
          ],
        }),
        'attachment exceeds maximum size limit.',
      ],
      [
        'attachments over 30 MB together',
        invoiceBody({
          attachments: Array.from({ length: 4 }, (_, i) => ({
            filename: `f${i}.bin`,
            content: Buffer.alloc(8 * 1024 * 1024).toString('base64'),
          })),
        }),
        'attachment exceeds maximum size limit.',
      ],
      [
        'invalid base64',
        invoiceBody({ attachments: [{ filename: 'a.txt', content: 'not base64!!' }] }),
        'attachment content must be valid base64.',
      ],
      [
        'attachment with content and path',
        invoiceBody({
          attachments: [{ filename: 'a.txt', content: 'aGk=', path: 'https://example.com/a.txt' }],
        }),
        'attachment must have either content or path, not both.',
      ],
      [
        'attachment without filename',
        invoiceBody({ attachments: [{ content: 'aGk=' }] }),
        'missing required fields: attachments[0].filename',
      ],
      [
        'missing template variables',
        invoiceBody({ template_data: { AUTHOR_NAME: 'A' } }),
        'missing required fields: AMOUNT_TOTAL, DUE_DATE, RECIPIENT_NAME, INVOICE_URL, INVOICE_NUMBER',
      ],
      [
        'custom without html_body',
        { to: 'a@example.com', subject: 'S', template_id: 'custom' },
        'missing required fields: html_body',
      ],
      ['unknown field', invoiceBody({ bogus: 1 }), 'unknown field: bogus.'],
      [
        'unknown field in a recipient',
        invoiceBody({ to: { email: 'a@example.com', nam: 'typo' } }),
        'unknown field: to.nam.',
      ],
      [
        'wrong type of to',
        invoiceBody({ to: 42 }),
        'invalid field to: expected an address string, an {email, name} object or an array of them.',
      ],
      ['wrong type of subject', invoiceBody({ subject: 5 }), 'invalid field subject: must be a string.'],
      [
        'non-string template variable',
        invoiceBody({ template_data: { ...(invoiceBody()['template_data'] as object), AMOUNT_TOTAL: 120 } }),
        'invalid field template_data.AMOUNT_TOTAL: must be a string.',
      ],
      [
        'too many tags',
        invoiceBody({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }),
        'invalid field tags: must contain at most 10 item(s).',
      ],
      ['body is an array', [invoiceBody()], 'request body must be a JSON object.'],
      [
        'NUL in a template variable',
        invoiceBody({
          template_data: { ...(invoiceBody()['template_data'] as object), DUE_DATE: '\u0000d' },
        }),
        'invalid field template_data.DUE_DATE: must not contain control characters.',
      ],
      [
        'an escape character in html_body',
        { to: 'a@example.com', subject: 's', template_id: 'custom', html_body: '<p>x\u001b[31m</p>' },
        'invalid field html_body: must not contain control characters.',
      ],
      [
        'a sender name that reads as an address',
        invoiceBody({ from: 'security@bank.example <billing@acme.example>' }),
        'invalid field from: its name must not contain @.',
      ],
      // Look-alikes of @ (all that NFKC folds into @: full-width U+FF20, small U+FE6B), in the sender's names.
      [
        'a sender name with a full-width @ (audit)',
        invoiceBody({ from: 'ceo\uFF20b-corp.example <x@acme.example>' }),
        'invalid field from: its name must not contain @.',
      ],
      [
        'a sender name with a small @',
        invoiceBody({ from: '"ceo\uFE6Bb-corp.example" <x@acme.example>' }),
        'invalid field from: its name must not contain @.',
      ],
      [
        'a reply_to name with a full-width @',
        invoiceBody({ reply_to: 'ceo\uFF20b-corp.example <x@acme.example>' }),
        'invalid field reply_to: its name must not contain @.',
      ],
      [
        'a reply_to name with @',
        invoiceBody({ reply_to: 'ceo@b-corp.example <x@acme.example>' }),
        'invalid field reply_to: its name must not contain @.',
      ],
      [
        'a right-to-left override in a recipient name',
        invoiceBody({ to: { email: 'jane@example.com', name: 'Jane\u202Eexe.gnp' } }),
        'invalid email address provided.',
      ],
      [
        'an attachment type that is not a media type',
        invoiceBody({
          attachments: [{ filename: 'y.txt', content: 'aGVsbG8=', contentType: 'not a mime type' }],
        }),
        'invalid field attachments[0].contentType: must be a media type such as application/pdf.',
      ],
      [
        'a blank required variable',
        invoiceBody({ template_data: { ...(invoiceBody()['template_data'] as object), DUE_DATE: '   ' } }),
        'missing required fields: DUE_DATE',
      ],
      // Address variables (a mailto: link): one plain address, nothing after it.
      ...['not an email', 'priya@acme.example?body=Send%20your%20password'].map(
        (value): [string, Record<string, unknown>, string] => [
          `an address variable of ${JSON.stringify(value)}`,
          {
            to: 'sam@example.com',
            subject: 'Invite',
            template_id: 'company-invite',
            template_data: {
              TEAM_NAME: 'Finance',
              ORGANIZATION_NAME: 'Acme',
              RECIPIENT_NAME: 'Sam',
              SENDER_NAME: 'Priya',
              SENDER_EMAIL: value,
              INVITE_LINK: 'https://app.example/i/1',
            },
          },
          'invalid field template_data.SENDER_EMAIL: must be an email address.',
        ],
      ),
      // Link variables, for every caller: only what every URL parser reads alike (templates/links.ts).
      ...(
        [
          [
            'a link with a backslash before @ (issue 20)',
            'http://localhost:3001\\@evil.example/',
            'must not contain a backslash before its query',
          ],
          [
            'a link with credentials',
            'https://acme.example@evil.example/',
            'must not contain credentials or @ before its host',
          ],
          [
            'a link with user:password',
            'https://u:p@acme.example/i/1',
            'must not contain credentials or @ before its host',
          ],
          ['a link that is not http(s)', 'javascript:alert(1)', 'must be an absolute http(s) URL'],
          ['a link that is not absolute', '/invoices/1', 'must be an absolute http(s) URL'],
        ] as const
      ).map(([name, url, problem]): [string, Record<string, unknown>, string] => [
        name,
        invoiceBody({ template_data: { ...(invoiceBody()['template_data'] as object), INVOICE_URL: url } }),
        `invalid field template_data.INVOICE_URL: ${problem}.`,
      ]),
    ];
    for (const [name, body, error] of cases) {
      it(`${name} → ${error}`, async () => {
        const res = await app.post('/api/email/send', body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.deepEqual(res.body, { success: false, error });
        assert.equal(app.fake.received.length, 0);
      });
    }

    it('malformed JSON → 400', async () => {
      const res = await app.post('/api/email/send', '{"to": "a@example.com",');
      assert.equal(res.status, 400);
      assert.equal(res.body['success'], false);
      assert.match(String(res.body['error']), /malformed JSON/);
    });

    it('JSON that is not an object → 400 request body must be a JSON object.', async () => {
      for (const path of ['/api/email/send', '/api/email/bulk', '/api/email/track'])
        for (const raw of ['null', '"x"', '42', 'true', '[]']) {
          const res = await app.post(path, raw);
          assert.equal(res.status, 400, `${path} ${raw}`);
          assert.deepEqual(
            res.body,
            { success: false, error: 'request body must be a JSON object.' },
            `${path} ${raw}`,
          );
        }
      assert.equal(app.fake.received.length, 0);
    });

    it('a non-JSON content type → 415 in the error shape', async () => {
      const res = await app.post('/api/email/send', 'to=a@example.com', {
        ...AUTH,
        'content-type': 'text/plain',
      });
      assert.equal(res.status, 415);
      assert.equal(res.body['success'], false);
      assert.match(String(res.body['error']), /content type/);
    });

    it('a body over the 45 MB limit → 413', async () => {
      const res = await fetch(`${app.url}/api/email/send`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify(invoiceBody({ html_body: 'x'.repeat(46 * 1024 * 1024) })),
      });
      assert.equal(res.status, 413);
      assert.deepEqual(await res.json(), { success: false, error: 'request body too large.' });
    });
  });

  describe('provider failures → 500 with a clear message and a failed record', () => {
    const cases: Array<[400 | 401 | 403 | 413 | 429 | 500 | 'network-error', RegExp]> = [
      [
        400,
        /^email provider rejected the message: The from address does not match a verified Sender Identity\.$/,
      ],
      // The account refused, not the message: unavailable (retried, failed over), never "rejected".
      [401, /^email provider unavailable: HTTP 401 The provided authorization grant is invalid/],
      [403, /^email provider unavailable: HTTP 403 access forbidden$/],
      [413, /^email provider rejected the message: The JSON payload .* too large\.$/],
      [429, /^email provider unavailable: HTTP 429/],
      [500, /^email provider unavailable: HTTP 500/],
      ['network-error', /^email outcome unknown: .*\(email provider unavailable: /],
    ];
    for (const [answer, message] of cases) {
      it(`SendGrid ${answer}`, async () => {
        app.fake.plan(answer);
        const res = await app.post('/api/email/send', invoiceBody());
        assert.equal(res.status, 500);
        assert.equal(res.body['success'], false);
        assert.match(String(res.body['error']), message);
        assert.equal(app.fake.received.length, 1);
        // The record exists and says failed.
        const failed = await app.database.db
          .collection('emails')
          .findOne({ company_id: COMPANY, status_rank: STATUS_RANK.failed, error: res.body['error'] });
        assert.ok(failed, 'a failed record carries the reason');
        const data = await status(String(failed['email_id']));
        assert.equal(data['status'], 'failed');
      });
    }
  });
});

describe('POST /api/email/send without a SendGrid API key', () => {
  const app = useEmailApp({ env: { SENDGRID_API_KEY: '' } });

  it('500 email service not configured. and a failed record', async () => {
    const res = await app.post('/api/email/send', invoiceBody({ subject: 'unconfigured' }));
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { success: false, error: 'email service not configured.' });
    assert.equal(app.fake.received.length, 0);
    const record = await app.database.db
      .collection<EmailRecord>('emails')
      .findOne({ subject: 'unconfigured' });
    assert.ok(record);
    assert.equal(statusOf(record), 'failed');
    assert.equal(record['error'], 'email service not configured.');
    const data = (await app.get(`/api/email/status/${String(record['email_id'])}`)).body['data'] as Record<
      string,
      unknown
    >;
    assert.equal(data['status'], 'failed');
  });

  it('still validates first: a bad body is 400, not 500', async () => {
    const res = await app.post('/api/email/send', invoiceBody({ to: 'bad' }));
    assert.equal(res.status, 400);
    assert.equal(res.body['error'], 'invalid email address provided.');
  });
});

describe('POST /api/email/send with attachments by URL', () => {
  // 127.0.0.2 plays a public file server; 127.0.0.1 stays forbidden.
  const app = useEmailApp({ service: { attachmentAllowedAddresses: ['127.0.0.2'] } });
  let files: Server;
  let canary: Server;
  let filesBase = '';
  let canaryBase = '';
  let canaryHits = 0;

  before(async () => {
    canary = createServer((_req, res) => {
      canaryHits++;
      res.end('internal');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    canaryBase = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
    files = createServer((req, res) => {
      if (req.url === '/statement.csv') {
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.end('a,b\n1,2\n');
      } else {
        res.writeHead(302, { location: `${canaryBase}/admin` });
        res.end();
      }
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.2', resolve));
    filesBase = `http://127.0.0.2:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const server of [files, canary]) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('fetches the file server-side and attaches it', async () => {
    const res = await app.post(
      '/api/email/send',
      invoiceBody({ attachments: [{ path: `${filesBase}/statement.csv` }] }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(app.fake.accepted[0]!.body.attachments, [
      {
        filename: 'statement.csv',
        content: Buffer.from('a,b\n1,2\n').toString('base64'),
        type: 'text/csv',
        disposition: 'attachment',
      },
    ]);
  });

  it('refuses loopback, private and metadata URLs and redirects to them with 400; no record, nothing sent', async () => {
    const port = (canary.address() as AddressInfo).port;
    const before = await app.database.db.collection('emails').countDocuments();
    for (const path of [
      `${canaryBase}/admin`,
      `http://localhost:${port}/admin`,
      'http://10.0.0.1/file',
      'http://169.254.169.254/latest/meta-data/iam/',
      `${filesBase}/redirect`,
    ]) {
      app.fake.reset();
      const res = await app.post('/api/email/send', invoiceBody({ attachments: [{ path }] }));
      assert.equal(res.status, 400, path);
      assert.deepEqual(res.body, {
        success: false,
        error: path.endsWith('/redirect')
          ? 'attachment could not be fetched: redirects to another origin are not allowed'
          : 'attachment could not be fetched: address not allowed',
      });
      assert.equal(app.fake.received.length, 0);
    }
    assert.equal(canaryHits, 0);
    assert.equal(await app.database.db.collection('emails').countDocuments(), before);
  });
});
