import pg from 'pg';

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The same server and credentials as `adminUrl`, another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** Creates a database (optionally cloned from `template`) and returns its URL. */
export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<string> {
  const sql =
    template === undefined
      ? `CREATE DATABASE ${quoteIdentifier(name)}`
      : `CREATE DATABASE ${quoteIdentifier(name)} TEMPLATE ${quoteIdentifier(template)}`;
  await withClient(adminUrl, (client) => client.query(sql));
  return databaseUrl(adminUrl, name);
}

/** Drops a database, disconnecting its sessions first. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
  );
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Ends every session connected to `database` (pg_terminate_backend), as a failover or an
 * operator would. Needs a superuser `adminUrl` on another database; returns how many ended.
 */
export async function terminateBackends(adminUrl: string, database: string): Promise<number> {
  const { rows } = await withClient(adminUrl, (client) =>
    client.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    ),
  );
  return rows.filter((row) => row.ended).length;
}

/** Runs one statement on its own connection and returns its rows (for tests that inspect a database). */
export async function queryRows<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return withClient(url, async (client) => (await client.query<T>(sql, params)).rows);
}
