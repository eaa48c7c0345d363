import { createRecordStore, runNotSentCommand } from '../core/email/records/index.ts';
import { runOperatorCommand } from './operator-command.ts';

/**
 * `npm run emails -- not-sent --email <id>`: an operator's decision about an
 * email record. Commands: core/email/records/not-sent-command.ts.
 */
await runOperatorCommand('emails', (db) => runNotSentCommand(createRecordStore(db), process.argv.slice(2)));
