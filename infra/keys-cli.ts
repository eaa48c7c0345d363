import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runKeyCommand, USAGE, UsageError } from '../core/api-keys/commands.ts';
import { createKeyStore } from '../core/api-keys/key-store.ts';
import { connectDatabase } from '../core/db.ts';
import { createDailyQuotas } from '../core/email/send/index.ts';
import { QUOTA_USAGE, QuotaUsageError, runQuotaCommand } from '../core/email/send/index.ts';
import {
  SENDERS_USAGE,
  SendersUsageError,
  createSenderPolicy,
  runSendersCommand,
} from '../core/email/send/index.ts';
import { createLogger } from '../core/logger.ts';

/**
 * `npm run keys -- create|list|revoke …`: API keys in the database MONGODB_URI
 * names (default: the one `npm run dev` runs). Commands: core/api-keys/commands.ts.
 * `npm run keys -- quota …`: a company's daily sending limit
 * (core/email/send/quotas/quota-command.ts); `npm run keys -- senders …`: the
 * from addresses it may use (core/email/send/senders/senders-command.ts).
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
if (existsSync(join(ROOT, '.env'))) process.loadEnvFile(join(ROOT, '.env'));
const uri = process.env['MONGODB_URI'] || 'mongodb://127.0.0.1:27017/mailroom';

try {
  const database = await connectDatabase(uri);
  try {
    const [command, ...rest] = process.argv.slice(2);
    const lines =
      command === 'quota'
        ? await runQuotaCommand(createDailyQuotas(database.db), rest)
        : command === 'senders'
          ? await runSendersCommand(
              // Only the company lists are read or written here; the rest of the policy is the gateway's.
              createSenderPolicy(database.db, { defaultFrom: '', allowed: [], openWhenUnlisted: false }),
              rest,
            )
          : await runKeyCommand(
              createKeyStore(database.db, createLogger('keys', { logLevel: 'warn', logPretty: false })),
              process.argv.slice(2),
            );
    for (const line of lines) console.log(line);
  } finally {
    await database.close();
  }
} catch (err) {
  if (err instanceof UsageError) console.error(`${err.message}\n${USAGE}`);
  else if (err instanceof QuotaUsageError) console.error(`${err.message}\n${QUOTA_USAGE}`);
  else if (err instanceof SendersUsageError) console.error(`${err.message}\n${SENDERS_USAGE}`);
  else console.error(`keys: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
