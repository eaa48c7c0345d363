import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config.ts';

const SECRET = 's'.repeat(32);
const fails = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('expected a configuration error');
};

describe('configuration of the trust boundary', () => {
  it('defaults to api-key mode, signup links allowed nowhere, and the documented limits', () => {
    const config = loadConfig({ MAILROOM_SECRET: SECRET, PUBLIC_BASE_URL: 'https://mail.example.com/' });
    assert.equal(config.authMode, 'api-key');
    // Not the gateway's own origin: it serves the click redirect, which goes anywhere a key holder mailed.
    assert.deepEqual(config.signup, {
      linkOrigins: [],
      perRecipientPerHour: 10,
      perIpPerMinute: 300,
    });
    assert.deepEqual(config.trustedProxies, []);
    assert.equal(config.sendgrid.webhookAllowUnsigned, false);
    assert.equal(config.clickLinkLifetimeMs, 365 * 86_400_000);
  });

  it('requires MAILROOM_SECRET of 32+ characters and never echoes it', () => {
    assert.match(fails({}), /^invalid configuration: MAILROOM_SECRET is required: 32\+ random characters/);
    const short = fails({ MAILROOM_SECRET: 'hunter2' });
    assert.match(short, /^invalid configuration: MAILROOM_SECRET must be at least 32 characters/);
    assert.equal(short.includes('hunter2'), false);
  });

  it('names the variable in one line for a bad mode, origin list, proxy list or webhook key', () => {
    assert.match(fails({ MAILROOM_SECRET: SECRET, AUTH_MODE: 'open' }), /^invalid configuration: AUTH_MODE /);
    assert.match(
      fails({ MAILROOM_SECRET: SECRET, SIGNUP_LINK_ORIGINS: 'app.example.com' }),
      /^invalid configuration: SIGNUP_LINK_ORIGINS must be a comma list of http\(s\) origins/,
    );
    assert.match(
      fails({ MAILROOM_SECRET: SECRET, TRUSTED_PROXIES: '10.0.0.0/99' }),
      /^invalid configuration: TRUSTED_PROXIES must be a comma list/,
    );
    const webhook = fails({ MAILROOM_SECRET: SECRET, SENDGRID_WEBHOOK_PUBLIC_KEY: 'not-a-key' });
    assert.match(webhook, /^invalid configuration: SENDGRID_WEBHOOK_PUBLIC_KEY must be the base64 ECDSA/);
    assert.equal(webhook.split('\n').length, 1);
    // A well-formed key of another kind (RSA, or EC on another curve) is not SendGrid's either.
    for (const other of [
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
      generateKeyPairSync('ec', { namedCurve: 'secp384r1' }),
    ]) {
      const key = other.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      assert.match(
        fails({ MAILROOM_SECRET: SECRET, SENDGRID_WEBHOOK_PUBLIC_KEY: key }),
        /^invalid configuration: SENDGRID_WEBHOOK_PUBLIC_KEY must be the base64 ECDSA/,
      );
    }
  });

  it('reads origin lists, proxy lists and the unsigned-webhook switch', () => {
    const config = loadConfig({
      MAILROOM_SECRET: SECRET,
      SIGNUP_LINK_ORIGINS: 'https://app.example.com/login, http://localhost:5173',
      TRUSTED_PROXIES: 'loopback, 10.0.0.0/8',
      SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
      AUTH_MODE: 'trusted-headers',
    });
    assert.deepEqual(config.signup.linkOrigins, ['https://app.example.com', 'http://localhost:5173']);
    assert.deepEqual(config.trustedProxies, ['loopback', '10.0.0.0/8']);
    assert.equal(config.sendgrid.webhookAllowUnsigned, true);
    assert.equal(config.authMode, 'trusted-headers');
  });
});

describe('the workflow emails’ links', () => {
  it('point at APP_URL (the product’s web app), each overridable; the gateway’s origin only as a fallback', () => {
    const base = { MAILROOM_SECRET: SECRET, PUBLIC_BASE_URL: 'https://mail.example.com' };
    const fallback = loadConfig(base);
    assert.equal(fallback.loginUrl, 'https://mail.example.com/login');
    assert.equal(fallback.dashboardUrl, 'https://mail.example.com/dashboard');
    assert.deepEqual(fallback.appLinksOnGateway, ['LOGIN_URL', 'DASHBOARD_URL']);

    const app = loadConfig({ ...base, APP_URL: 'https://app.acme.example/' });
    assert.equal(app.loginUrl, 'https://app.acme.example/login');
    assert.equal(app.dashboardUrl, 'https://app.acme.example/dashboard');
    assert.deepEqual(app.appLinksOnGateway, []);

    const own = loadConfig({ ...base, DASHBOARD_URL: 'https://app.acme.example/settings/ein' });
    assert.equal(own.dashboardUrl, 'https://app.acme.example/settings/ein');
    assert.deepEqual(own.appLinksOnGateway, ['LOGIN_URL']);
    assert.match(fails({ ...base, APP_URL: 'javascript:alert(1)' }), /^invalid configuration: APP_URL /);
  });
});

describe('EMAIL_REPLY_TO', () => {
  it('is an address or "Name <address>", else the start stops naming it', () => {
    const base = { MAILROOM_SECRET: SECRET };
    assert.equal(loadConfig(base).emailReplyTo, undefined);
    assert.deepEqual(loadConfig({ ...base, EMAIL_REPLY_TO: 'Acme Help <help@acme.example>' }).emailReplyTo, {
      email: 'help@acme.example',
      name: 'Acme Help',
    });
    assert.match(
      fails({ ...base, EMAIL_REPLY_TO: 'not an address' }),
      /^invalid configuration: EMAIL_REPLY_TO /,
    );
  });
});
