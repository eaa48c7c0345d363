import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from 'mongodb';
import { CommandUsageError } from '../core/command-line.ts';
import { connectDatabase } from '../core/db.ts';

/**
 * What the operator commands (`npm run keys`, `npm run emails`) share: the
 * checkout's `.env` read, the database MONGODB_URI names (default: the one
 * `npm run dev` runs, on DEV_MONGO_PORT as npm run dev reads it), the
 * command's lines printed, and on failure one line (followed by the command's
 * usage for a wrong command line) and exit code 1.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

export async function runOperatorCommand(
  name: string,
  command: (db: Db) => Promise<string[]>,
): Promise<void> {
  if (existsSync(join(ROOT, '.env'))) process.loadEnvFile(join(ROOT, '.env'));
  const uri = operatorDatabaseUri(process.env);
  try {
    const database = await connectDatabase(uri);
    try {
      for (const line of await command(database.db)) console.log(line);
    } finally {
      await database.close();
    }
  } catch (err) {
    console.error(
      err instanceof CommandUsageError
        ? `${err.message}\n${err.usage}`
        : `${name}: ${err instanceof Error ? err.message : String(err)}`,
    );
    process.exit(1);
  }
}

/** MONGODB_URI, else the database of `npm run dev` (its FerretDB on DEV_MONGO_PORT, 27017 by default). */
export function operatorDatabaseUri(env: NodeJS.ProcessEnv): string {
  return env['MONGODB_URI'] || `mongodb://127.0.0.1:${env['DEV_MONGO_PORT'] || 27017}/mailroom`;
}
