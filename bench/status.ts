import { randomUUID } from 'node:crypto';
import type { EmailRecord } from '../core/email/records/record.ts';
import type { BenchEnv } from './env.ts';
import { startFloor } from './lib/floors.ts';
import { httpRatio, type HttpSizes } from './lib/http-pair.ts';
import type { Ratio } from './lib/measure.ts';
import { invoiceRecord } from './lib/records.ts';
import { tenantHeaders } from './send.ts';

/**
 * status: `GET /api/email/status/{id}` of one tenant's sent emails (the
 * identity headers of AUTH_MODE=trusted-headers, as for the other paths),
 * each request the next of `poolSize` records, 20 connections, against a
 * bare Koa route reading the record by `_id` with the mongodb driver from
 * the same collection (bench/floors/status-server.ts). Both read the same
 * records; nothing is written.
 */
export async function benchStatus(env: BenchEnv, sizes: HttpSizes): Promise<Ratio> {
  const connections = 20;
  const headers = tenantHeaders();
  const records: EmailRecord[] = Array.from({ length: sizes.poolSize }, () => ({
    ...invoiceRecord({
      emailId: randomUUID(),
      to: 'customer@example.com',
      subject: 'Invoice INV-1',
      status: 'sent',
      providerId: 'bench',
    }),
    company_id: headers['x-company-id']!,
    organization_id: headers['x-organization-id']!,
    user_id: headers['x-user-id']!,
  }));
  const emails = env.database.db.collection<EmailRecord>('emails');
  for (let i = 0; i < records.length; i += 1000) await emails.insertMany(records.slice(i, i + 1000));
  const paths = records.map((r) => `/api/email/status/${r._id}`);
  const floor = await startFloor(env, 'status-floor', 'bench/floors/status-server.ts');
  const load = (baseUrl: string) => () => ({
    baseUrl,
    method: 'GET' as const,
    paths,
    headers,
    expectStatus: 200,
    connections,
  });
  const ratio = await httpRatio(
    env,
    { name: 'status', target: 0.7, unit: 'reads' },
    { ...sizes, services: { FerretDB: env.servicePids.ferretdb } },
    { name: 'floor: bare Koa route, findOne by _id', pid: floor.pid, load: load(floor.url) },
    {
      name: `GET /api/email/status/{id} (${connections} conns)`,
      pid: env.gateway.pid,
      load: load(env.gatewayUrl),
    },
  );
  await floor.stop();
  return ratio;
}
