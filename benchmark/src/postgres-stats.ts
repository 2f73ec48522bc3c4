import pg from 'pg';

/**
 * What Postgres did for the app's database, from its statistics views:
 * - pg_stat_statements (when the server preloads it): every top-level statement the app's role
 *   ran, BEGIN/COMMIT included, counted the moment it finishes. Exact.
 * - pg_stat_database xact_commit + xact_rollback: transactions. Backends flush these counters
 *   at most once a second and idle ones after up to 10 s, so short windows see them late:
 *   reported as approximate.
 * The runner's own queries run as a separate role (filtered out of pg_stat_statements) and its
 * settle queries in the app's database are counted and subtracted from the transactions.
 */
export const OBSERVER_ROLE = 'flowbox_bench_observer';

export interface PostgresSnapshot {
  /** calls per statement (queryid), the app role's only; null without pg_stat_statements. */
  statements: Map<string, { query: string; calls: number }> | null;
  transactions: number;
  /** Observer transactions in the app's database before this snapshot. */
  ownTransactionsBefore: number;
}

export interface StatementCount {
  query: string;
  calls: number;
}

export interface PostgresDelta {
  /** null without pg_stat_statements. */
  statements: number | null;
  /** BEGIN / COMMIT / ROLLBACK / SAVEPOINT among the statements. */
  transactionControl: number | null;
  /** Approximate (see above). */
  transactions: number;
  /** Most frequent statements first. */
  top: StatementCount[];
}

const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback|start transaction|end|savepoint|release)\b/i;

export function diffPostgres(before: PostgresSnapshot, after: PostgresSnapshot, topN = 12): PostgresDelta {
  const transactions =
    after.transactions - before.transactions - (after.ownTransactionsBefore - before.ownTransactionsBefore);
  if (after.statements === null || before.statements === null) {
    return { statements: null, transactionControl: null, transactions, top: [] };
  }
  let statements = 0;
  let transactionControl = 0;
  const counts: StatementCount[] = [];
  for (const [id, entry] of after.statements) {
    const calls = entry.calls - (before.statements.get(id)?.calls ?? 0);
    if (calls <= 0) continue;
    statements += calls;
    if (TRANSACTION_CONTROL.test(entry.query)) transactionControl += calls;
    counts.push({ query: entry.query.replace(/\s+/g, ' ').trim(), calls });
  }
  counts.sort((a, b) => b.calls - a.calls || a.query.localeCompare(b.query));
  return { statements, transactionControl, transactions, top: counts.slice(0, topN) };
}

export interface PostgresProbe {
  readonly hasStatements: boolean;
  snapshot(): Promise<PostgresSnapshot>;
  /** Runs created at or after `since`, and how many of them are not final or have no timings yet. */
  pendingRuns(since: Date): Promise<{ pending: number; total: number }>;
  close(): Promise<void>;
}

/**
 * Opens the observer's connections: one to the `postgres` database for the statistics views
 * (so they add nothing to the app database's counters) and one to the app's database.
 */
export async function openPostgresProbe(options: {
  observerAdminUrl: string;
  observerAppUrl: string;
  appDatabase: string;
  appRole: string;
  hasStatements: boolean;
}): Promise<PostgresProbe> {
  const stats = observerClient(options.observerAdminUrl);
  const app = observerClient(options.observerAppUrl);
  await stats.connect();
  try {
    await app.connect();
  } catch (error) {
    await stats.end();
    throw error;
  }
  let ownTransactions = 0;
  return {
    hasStatements: options.hasStatements,
    async snapshot() {
      const ownTransactionsBefore = ownTransactions;
      const xacts = await stats.query<{ n: string }>(
        'SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1',
        [options.appDatabase],
      );
      let statements: PostgresSnapshot['statements'] = null;
      if (options.hasStatements) {
        const { rows } = await stats.query<{ id: string; query: string; calls: string }>(
          `SELECT s.queryid::text AS id, s.query, s.calls::text AS calls
             FROM pg_stat_statements s
             JOIN pg_database d ON d.oid = s.dbid
             JOIN pg_roles r ON r.oid = s.userid
            WHERE d.datname = $1 AND r.rolname = $2`,
          [options.appDatabase, options.appRole],
        );
        statements = new Map(rows.map((row) => [row.id, { query: row.query, calls: Number(row.calls) }]));
      }
      return { statements, transactions: Number(xacts.rows[0]?.n ?? Number.NaN), ownTransactionsBefore };
    },
    async pendingRuns(since) {
      ownTransactions++;
      const { rows } = await app.query<{ pending: number; total: number }>(
        // A run that started gets its timings with its worker's result; one that ended without
        // starting (its caller left, CALLER_GONE) never will, and is settled as it is. A PAUSED
        // run has a resume to come.
        `SELECT count(*) FILTER (WHERE status IN ('QUEUED', 'RUNNING', 'PAUSED') OR (timings IS NULL AND started_at IS NOT NULL))::int AS pending,
                count(*)::int AS total
           FROM runs WHERE created_at >= $1`,
        [since],
      );
      return rows[0] ?? { pending: 0, total: 0 };
    },
    async close() {
      await Promise.allSettled([stats.end(), app.end()]);
    },
  };
}

/**
 * Creates the observer role (reads everything, writes nothing) on a server the runner owns, and
 * reports whether pg_stat_statements is loaded.
 */
export async function prepareObserver(adminUrl: string): Promise<{ hasStatements: boolean }> {
  const client = observerClient(adminUrl);
  await client.connect();
  try {
    await client.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${OBSERVER_ROLE}') THEN
          CREATE ROLE ${OBSERVER_ROLE} LOGIN;
        END IF;
      END $$`);
    await client.query(`GRANT pg_read_all_data, pg_read_all_stats TO ${OBSERVER_ROLE}`);
    const preload = await client.query<{ v: string }>(
      "SELECT current_setting('shared_preload_libraries') AS v",
    );
    const hasStatements = /\bpg_stat_statements\b/.test(preload.rows[0]?.v ?? '');
    if (hasStatements) await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return { hasStatements };
  } finally {
    await client.end();
  }
}

/** The same URL with another user and database. */
export function withUserAndDatabase(url: string, user: string, database: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = '';
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A client whose connection errors are swallowed: on Ctrl-C the terminal signals the whole
 * process group, so Postgres may shut down under an idle connection, and an unhandled 'error'
 * event would crash the runner before it has stopped the rest and written its results. The
 * next query on a broken client fails anyway.
 */
export function observerClient(connectionString: string): pg.Client {
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  return client;
}
