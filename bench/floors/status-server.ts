import Koa from 'koa';
import { loadConfig } from '../../core/config.ts';
import { connectDatabase } from '../../core/db.ts';
import type { EmailRecord } from '../../core/email/records/record.ts';
import { toStatus } from '../../core/email/records/status-view.ts';

/**
 * The status read's floor: a bare Koa route, `GET /api/email/status/{id}`,
 * reading the record by `_id` with the mongodb driver from the same
 * database and collection as the gateway, answering the same
 * `{ success, data }` body. No authentication, no validation, no tenant
 * check, no metrics or logs. Listens on PORT; configuration from the same
 * environment as the gateway.
 */
const PREFIX = '/api/email/status/';
const config = loadConfig(process.env);
const database = await connectDatabase(config.mongodbUri);
const emails = database.db.collection<EmailRecord>('emails');

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'GET' || !ctx.path.startsWith(PREFIX)) {
    ctx.status = 404;
    return;
  }
  const record = await emails.findOne({ _id: ctx.path.slice(PREFIX.length) });
  if (!record) {
    ctx.status = 404;
    ctx.body = { success: false, error: 'email not found.' };
    return;
  }
  ctx.body = { success: true, data: toStatus(record) };
});
const server = app.listen(Number(process.env['PORT']), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  void database.close().finally(() => process.exit(0));
});
