import {
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type Db,
} from 'mongodb';

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

/**
 * Connects to MongoDB (or FerretDB). The database name comes from the URI's
 * path (`mongodb://host/mailroom`), or `dbName` when given (tests use their own).
 * Short server-selection timeout so a down database is reported, not waited
 * on: a request while MongoDB is down answers 5xx within 2 s (the fault
 * suite's case 4 measures it), and the driver reconnects by itself once the
 * database is back.
 * `monitorCommands` lets tests watch the commands on the wire.
 */
export async function connectDatabase(
  uri: string,
  dbName?: string,
  options: { monitorCommands?: boolean } = {},
): Promise<Database> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 5000, ...options });
  await client.connect();
  const db = client.db(dbName);
  return { client, db, close: () => client.close() };
}

/** Cheap liveness probe for /ready. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}

/** The database could not be reached (down, unreachable, or its client closed), as opposed to refusing an operation. */
export function isDatabaseUnreachable(err: unknown): boolean {
  return (
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNetworkError ||
    err instanceof MongoNotConnectedError ||
    err instanceof MongoTopologyClosedError
  );
}
