import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { authenticatedAs } from '../../../identity.ts';
import { exposition } from '../../../metrics.ts';
import { mailroomFailure, startEmailCore, type EmailCore } from '../../../../test/support/email-core.ts';
import { outgoingMail, welcomeBody } from '../../../../test/support/sample-emails.ts';
import { createSmtpProvider } from './smtp.ts';

/**
 * Failover from SendGrid (the fake v3 API over HTTP) to SMTP (a real local
 * relay from the smtp-server package), each failing on demand, through the
 * real send core.
 */
type RelayMode = 'accept' | 'reject-550' | 'busy-451' | 'silent-after-data';

class LocalRelay {
  mode: RelayMode = 'accept';
  received: Array<{ to: string[]; raw: string }> = [];
  private server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo: (address, _session, callback) => {
      if (this.mode === 'reject-550')
        return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      if (this.mode === 'busy-451')
        return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
      callback();
    },
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        this.received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        // The message is in; the answer never comes: the outcome is unknown to the sender.
        if (this.mode === 'silent-after-data')
          return (session as unknown as { _socket?: { destroy(): void } })._socket?.destroy();
        callback();
      });
    },
  });
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
const body = () => welcomeBody({ to: { email: `user-${randomUUID()}@example.com`, name: 'User' } });

describe('provider failover (sendgrid, then smtp)', () => {
  const relay = new LocalRelay();
  let core: EmailCore;

  before(async () => {
    await relay.start();
    core = await startEmailCore({
      name: 'failover',
      env: {
        EMAIL_PROVIDERS: 'sendgrid,smtp',
        // A short socket timeout: the silent relay's case ends in 2 s instead of 30.
        SMTP_URL: `smtp://127.0.0.1:${relay.port}?ignoreTLS=true&socketTimeout=2000`,
        PROVIDER_BREAKER_COOLDOWN_SECONDS: '1',
      },
    });
  });
  after(async () => {
    await core.close();
    await relay.stop();
  });
  beforeEach(() => {
    core.fake.reset();
    relay.mode = 'accept';
    relay.received.length = 0;
  });

  it('primary down (503): sent by SMTP, one message, the record names smtp', async () => {
    core.fake.plan(503);
    const sent = await core.email.send(body(), authenticatedAs(caller));
    assert.equal(core.fake.received.length, 1);
    assert.equal(relay.received.length, 1, 'one message through SMTP');
    assert.match(relay.received[0]!.raw, new RegExp(`X-Mailroom-Email-Id: ${sent.email_id}`, 'i'));
    const status = await core.email.getStatus(sent.email_id, authenticatedAs(caller));
    assert.equal(status.status, 'sent');
    assert.equal(status.provider, 'smtp');
  });

  it('primary up: sent by SendGrid, nothing through SMTP', async () => {
    const sent = await core.email.send(body(), authenticatedAs(caller));
    assert.equal(relay.received.length, 0);
    assert.equal((await core.email.getStatus(sent.email_id, authenticatedAs(caller))).provider, 'sendgrid');
  });

  it('primary rejects the message (400): no failover', async () => {
    core.fake.plan(400);
    const err = await mailroomFailure(core.email.send(body(), authenticatedAs(caller)));
    assert.equal(err.kind, 'provider_rejected');
    assert.equal(relay.received.length, 0);
  });

  it('primary took the request and dropped the connection: never sent elsewhere', async () => {
    core.fake.plan('accept-then-drop');
    const err = await mailroomFailure(core.email.send(body(), authenticatedAs(caller)));
    assert.equal(err.kind, 'outcome_unknown');
    assert.equal(relay.received.length, 0, 'no second send');
  });

  it("SMTP's own answers: 550 is a rejection, 451 transient, no answer after the message unknown", async () => {
    for (const [mode, kind] of [
      ['reject-550', 'provider_rejected'],
      ['busy-451', 'transient'],
      ['silent-after-data', 'outcome_unknown'],
    ] as const) {
      core.fake.plan(503);
      relay.mode = mode;
      const err = await mailroomFailure(core.email.send(body(), authenticatedAs(caller)));
      assert.equal(err.kind, kind, mode);
    }
  });

  it('the breaker stops trying a failing primary, then probes it again after the cool-down', async () => {
    core.fake.outage = 503;
    for (let i = 0; i < 6; i++) await core.email.send(body(), authenticatedAs(caller));
    const tried = core.fake.received.length;
    assert.ok(tried < 6, `SendGrid skipped once its breaker opened (tried ${tried} of 6)`);
    assert.equal(relay.received.length, 6, 'every email went out through SMTP');
    assert.match((await exposition()).body, /mailroom_provider_breaker_state\{provider="sendgrid"\} 2/);

    core.fake.outage = undefined;
    await new Promise((r) => setTimeout(r, 1_200));
    const sent = await core.email.send(body(), authenticatedAs(caller));
    assert.equal((await core.email.getStatus(sent.email_id, authenticatedAs(caller))).provider, 'sendgrid');
    assert.match((await exposition()).body, /mailroom_provider_breaker_state\{provider="sendgrid"\} 0/);
    assert.match(
      (await exposition()).body,
      /mailroom_provider_failovers_total\{from="sendgrid",to="smtp"\} \d+/,
    );
  });

  // After the breaker's case: these add transient failures to the breaker's count.
  for (const refused of [401, 403]) {
    it(`primary refuses the account (${refused}: key wrong or revoked, no permission): sent by SMTP`, async () => {
      core.fake.plan(refused);
      const sent = await core.email.send(body(), authenticatedAs(caller));
      assert.equal(core.fake.received.length, 1);
      assert.equal(relay.received.length, 1, 'one message through SMTP');
      assert.equal((await core.email.getStatus(sent.email_id, authenticatedAs(caller))).provider, 'smtp');
    });
  }
});

describe('failover when the primary never got the request', () => {
  const relay = new LocalRelay();
  /** Accepts TCP connections and never says a word: a TLS handshake with it never completes. */
  const silent = createServer(() => undefined);
  /** Plain HTTP where https is expected: the TLS handshake fails (EPROTO). */
  const plain = createHttpServer((_req, res) => res.end());
  const portOf = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
  const listen = (server: { listen(port: number, host: string, cb: () => void): unknown }) =>
    new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  before(async () => {
    await Promise.all([relay.start(), listen(silent), listen(plain)]);
  });
  after(async () => {
    await relay.stop();
    silent.close();
    plain.close();
  });

  async function sendThrough(sendgridUrl: string) {
    const core = await startEmailCore({
      name: 'failover-unready',
      env: {
        EMAIL_PROVIDERS: 'sendgrid,smtp',
        SENDGRID_BASE_URL: sendgridUrl,
        SENDGRID_CONNECT_TIMEOUT_MS: '500',
        SMTP_URL: `smtp://127.0.0.1:${relay.port}?ignoreTLS=true`,
      },
    });
    try {
      const started = Date.now();
      const sent = await core.email.send(body(), authenticatedAs(caller));
      const status = await core.email.getStatus(sent.email_id, authenticatedAs(caller));
      return { seconds: (Date.now() - started) / 1000, status };
    } finally {
      await core.close();
    }
  }

  it('no connection ready within SENDGRID_CONNECT_TIMEOUT_MS: sent by SMTP at once, not "outcome unknown"', async () => {
    relay.received.length = 0;
    const { seconds, status } = await sendThrough(`https://127.0.0.1:${portOf(silent)}`);
    assert.equal(status.status, 'sent');
    assert.equal(status.provider, 'smtp');
    assert.equal(relay.received.length, 1);
    assert.ok(seconds < 5, `failed over after ${seconds} s, not the client's 30 s timeout`);
  });

  it('a TLS handshake that fails: sent by SMTP', async () => {
    relay.received.length = 0;
    const { status } = await sendThrough(`https://127.0.0.1:${portOf(plain)}`);
    assert.equal(status.status, 'sent');
    assert.equal(status.provider, 'smtp');
    assert.equal(relay.received.length, 1);
  });
});

describe('SMTP provider alone', () => {
  const mail = () => outgoingMail();

  it('a subject that looks like an encoded-word reaches the reader as written', async () => {
    const relay = new LocalRelay();
    await relay.start();
    try {
      const subject = '=?UTF-8?B?SGFja2Vk?= (a literal, not encoded)';
      await createSmtpProvider(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`).send({ ...mail(), subject });
      const header = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(relay.received[0]!.raw)![1]!;
      const words = [...header.matchAll(/=\?UTF-8\?B\?([^?]*)\?=/g)].map((w) => Buffer.from(w[1]!, 'base64'));
      assert.equal(Buffer.concat(words).toString('utf8'), subject);
    } finally {
      await relay.stop();
    }
  });

  it('a relay that refuses the connection did not take the message: transient', async () => {
    const closed = createSmtpProvider('smtp://127.0.0.1:1?ignoreTLS=true');
    const err = await mailroomFailure(closed.send(mail()));
    assert.equal(err.kind, 'transient');
  });

  it('a relay that never greets, or whose TLS handshake fails, did not take it either: transient', async () => {
    const silent = createServer(() => undefined);
    const plain = createHttpServer((_req, res) => res.end());
    for (const server of [silent, plain])
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server: { address(): unknown }) => (server.address() as AddressInfo).port;
      const mute = createSmtpProvider(`smtp://127.0.0.1:${port(silent)}?ignoreTLS=true&greetingTimeout=300`);
      assert.equal((await mailroomFailure(mute.send(mail()))).kind, 'transient', 'no greeting');
      const tls = createSmtpProvider(`smtps://127.0.0.1:${port(plain)}`);
      assert.equal((await mailroomFailure(tls.send(mail()))).kind, 'transient', 'TLS handshake');
    } finally {
      silent.close();
      plain.close();
    }
  });
});
