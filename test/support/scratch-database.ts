import { after, before } from 'node:test';
import { connectDatabase, type Database } from '../../core/db.ts';
import { mongoUri, uniqueName } from './env.ts';

/**
 * A database of its own for one `describe` block (or file): connected
 * before its tests, dropped and closed after them. Use it like the
 * connected Database inside tests (it forwards to it), as useEmailApp does
 * for the gateway.
 */
export function useScratchDatabase(prefix: string, options: { monitorCommands?: boolean } = {}): Database {
  let database: Database | undefined;
  before(async () => {
    database = await connectDatabase(mongoUri(), uniqueName(prefix), options);
  });
  after(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });
  return new Proxy({} as Database, {
    get(_, property) {
      if (!database) throw new Error('useScratchDatabase: the database is used outside of a test');
      return Reflect.get(database, property);
    },
  });
}
