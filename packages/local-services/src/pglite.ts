import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { LocalService } from './local-service.ts';
import { once } from './once.ts';

export interface PgliteOptions {
  /** Where PGlite keeps its files; in memory when unset. */
  dataDir?: string;
  /** 0 or unset: a free port. */
  port?: number;
  /**
   * Connections served at once. pglite-socket defaults to 1, which deadlocks any pool; queries
   * from all connections still run one at a time (a transaction keeps the database to itself).
   */
  maxConnections?: number;
}

export interface PgliteServer extends LocalService {
  port: number;
}

/** Serves an embedded PGlite over the PostgreSQL wire protocol on 127.0.0.1, so `pg` can talk to it. */
export async function startPglite(options: PgliteOptions = {}): Promise<PgliteServer> {
  const db = await PGlite.create(options.dataDir);
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? 100,
  });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  // With port 0 the server learns its port on listen; getServerConn() is "host:port".
  const port = Number(server.getServerConn().split(':').pop());
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    close: once(async () => {
      await server.stop();
      await db.close();
    }),
  };
}
