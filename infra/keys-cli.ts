import { runKeyCommand } from '../core/api-keys/commands.ts';
import { createKeyStore } from '../core/api-keys/key-store.ts';
import {
  createDailyQuotas,
  createSenderPolicy,
  runQuotaCommand,
  runSendersCommand,
} from '../core/email/send/index.ts';
import { createLogger } from '../core/logger.ts';
import { runOperatorCommand } from './operator-command.ts';

/**
 * `npm run keys -- create|list|revoke …`: API keys (core/api-keys/commands.ts).
 * `npm run keys -- quota …`: a company's daily sending limit
 * (core/email/send/quotas/quota-command.ts); `npm run keys -- senders …`: the
 * from addresses it may use (core/email/send/senders/senders-command.ts).
 */
const [command, ...rest] = process.argv.slice(2);
await runOperatorCommand('keys', (db) =>
  command === 'quota'
    ? runQuotaCommand(createDailyQuotas(db), rest)
    : command === 'senders'
      ? runSendersCommand(
          // Only the company lists are read or written here; the rest of the policy is the gateway's.
          createSenderPolicy(db, { defaultFrom: '', allowed: [], openWhenUnlisted: false }),
          rest,
        )
      : runKeyCommand(
          createKeyStore(db, createLogger('keys', { logLevel: 'warn', logPretty: false })),
          process.argv.slice(2),
        ),
);
