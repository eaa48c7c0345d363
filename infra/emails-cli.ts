import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectDatabase } from '../core/db.ts';
import {
  createRecordStore,
  NOT_SENT_USAGE,
  NotSentUsageError,
  runNotSentCommand,
} from '../core/email/records/index.ts';

/**
 * `npm run emails -- not-sent --email <id>`: an operator's decision about an
 * email record, in the database MONGODB_URI names (default: the one
 * `npm run dev` runs). Commands: core/email/records/not-sent-command.ts.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
if (existsSync(join(ROOT, '.env'))) process.loadEnvFile(join(ROOT, '.env'));
const uri = process.env['MONGODB_URI'] || 'mongodb://127.0.0.1:27017/mailroom';

try {
  const database = await connectDatabase(uri);
  try {
    for (const line of await runNotSentCommand(createRecordStore(database.db), process.argv.slice(2)))
      console.log(line);
  } finally {
    await database.close();
  }
} catch (err) {
  if (err instanceof NotSentUsageError) console.error(`${err.message}\n${NOT_SENT_USAGE}`);
  else console.error(`emails: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
