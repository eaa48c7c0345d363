import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { loadConfig } from '../../core/config.ts';
import { connectDatabase } from '../../core/db.ts';
import { createSendGridProvider } from '../../core/email/send/provider.ts';
import { STATUS_RANK, type EmailRecord } from '../../core/email/records/record.ts';
import { invoiceRecord } from '../lib/records.ts';

/**
 * The send's floor: a bare Koa route doing the minimum a send must do, with
 * the same database, the same provider client and the same fake provider:
 * insert the pending record (the same fields a send stores), make the
 * provider call, update the record to sent. No validation, no rendering (the
 * body carries the finished html/text), no authorisation. Listens on PORT; configuration from the same environment
 * as the gateway.
 */
const config = loadConfig(process.env);
const database = await connectDatabase(config.mongodbUri);
const provider = createSendGridProvider(config);
if (!provider) throw new Error('send floor: SENDGRID_API_KEY is required');
const emails = database.db.collection<EmailRecord>('floor_emails');

interface FloorBody {
  to: string;
  subject: string;
  html: string;
  text: string;
}

const app = new Koa();
app.use(bodyParser({ jsonLimit: '45mb' }));
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/send') {
    ctx.status = 404;
    return;
  }
  const body = ctx.request.body as FloorBody;
  const _id = randomUUID();
  // The same record a send stores (core/email/record.ts), so the database does the same work.
  await emails.insertOne(
    invoiceRecord({ emailId: _id, to: body.to, subject: body.subject, status: 'pending', providerId: null }),
  );
  const { providerId } = await provider.send({
    emailId: _id,
    from: { email: 'no-reply@mailroom.bench' },
    to: [{ email: body.to }],
    cc: [],
    bcc: [],
    subject: body.subject,
    html: body.html,
    text: body.text,
    attachments: [],
    categories: [],
  });
  await emails.updateOne(
    { _id },
    { $set: { provider_id: providerId, sent_at: new Date() }, $max: { status_rank: STATUS_RANK.sent } },
  );
  ctx.body = { success: true, data: { email_id: _id, provider_id: providerId } };
});
const server = app.listen(Number(process.env['PORT']), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  void database.close().finally(() => process.exit(0));
});
