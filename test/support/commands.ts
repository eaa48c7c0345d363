import type { CommandStartedEvent } from 'mongodb';
import type { Database } from '../../core/db.ts';

/**
 * The commands (`<name> <collection>`, e.g. `insert emails`) sent to
 * `database`'s own database while `fn` runs, watched on the wire (the
 * client must be connected with `monitorCommands`).
 */
export async function commandsDuring(database: Database, fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const dbName = database.db.databaseName;
  const listener = (event: CommandStartedEvent) => {
    if (event.databaseName === dbName)
      seen.push(`${event.commandName} ${String(event.command[event.commandName])}`);
  };
  database.client.on('commandStarted', listener);
  try {
    await fn();
  } finally {
    database.client.off('commandStarted', listener);
  }
  return seen;
}

/** Those of `commands` on `collection`. */
export const on = (collection: string, commands: readonly string[]): string[] =>
  commands.filter((command) => command.endsWith(` ${collection}`));
