import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isMailroomError } from '../errors.ts';
import { base64DecodedLength, normalizeBase64, validateSendBody } from './validate.ts';

const valid = {
  to: 'a@example.com',
  subject: 'Hi',
  template_id: 'custom',
  html_body: '<p>hi</p>',
};

function messageOf(body: unknown): string {
  try {
    validateSendBody(body, ['blocked.example']);
  } catch (err) {
    assert.ok(isMailroomError(err));
    assert.equal(err.kind, 'validation');
    return err.message;
  }
  return 'valid';
}

describe('validateSendBody', () => {
  it('normalizes a valid body with defaults', () => {
    const out = validateSendBody(
      { ...valid, to: ['a@example.com', { email: 'b@example.com', name: 'B' }] },
      [],
    );
    assert.deepEqual(out.to, [{ email: 'a@example.com' }, { email: 'b@example.com', name: 'B' }]);
    assert.equal(out.locale, 'en-us');
    assert.equal(out.language, 'en');
    assert.deepEqual(out.tags, []);
    assert.equal(out.trackClicks, true);
    assert.equal(out.trackOpens, true);
  });

  it('takes track_clicks / track_opens as booleans only', () => {
    const out = validateSendBody({ ...valid, track_clicks: false, track_opens: false }, []);
    assert.equal(out.trackClicks, false);
    assert.equal(out.trackOpens, false);
    assert.notEqual(messageOf({ ...valid, track_clicks: 'false' }), 'valid');
    assert.notEqual(messageOf({ ...valid, track_opens: 0 }), 'valid');
  });

  it('reports problems in a fixed precedence', () => {
    // Everything wrong at once: the recipient is reported first, then subject, then template_id…
    assert.equal(messageOf({ bogus: 1 }), 'email recipient is required.');
    assert.equal(messageOf({ to: 'bad', bogus: 1 }), 'email subject is required.');
    assert.equal(messageOf({ to: 'bad', subject: 'x', bogus: 1 }), 'missing required fields: template_id');
    assert.equal(
      messageOf({ to: 'bad', subject: 'x', template_id: 'nope', bogus: 1 }),
      'unknown field: bogus.',
    );
    assert.equal(messageOf({ to: 'bad', subject: 'x', template_id: 'nope' }), 'email template not found.');
    assert.equal(
      messageOf({ ...valid, to: 'bad@blocked.example', cc: 'worse' }),
      'invalid email address provided.',
    );
    assert.equal(messageOf({ ...valid, to: 'x@blocked.example' }), 'emails to this domain are not allowed.');
    assert.equal(messageOf(null), 'request body must be a JSON object.');
    assert.equal(messageOf('text'), 'request body must be a JSON object.');
    assert.equal(messageOf({ ...valid, subject: 'x'.repeat(200) }), 'valid');
    assert.equal(
      messageOf({ ...valid, to: Array.from({ length: 50 }, (_, i) => `r${i}@example.com`) }),
      'valid',
    );
  });
});

describe('base64', () => {
  it('accepts padded standard base64 (with MIME line breaks) and computes the decoded size', () => {
    assert.equal(normalizeBase64('aGVs\r\nbG8='), 'aGVsbG8=');
    assert.equal(base64DecodedLength('aGVsbG8='), 5);
    assert.equal(base64DecodedLength('aGk='), 2);
    assert.equal(base64DecodedLength('aGVsbG8h'), 6);
  });

  it('refuses non-base64, wrong length, base64url and empty content', () => {
    // 'QR==': padding bits that are not zero (RFC 4648 3.5), which no encoder writes.
    for (const bad of ['', 'abc', 'a$b=', 'aGk-', '====', 'aGk=aGk=', 'QR=='])
      assert.equal(normalizeBase64(bad), undefined, bad);
  });
});
