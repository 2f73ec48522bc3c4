import type { Pool } from '../db/pool.ts';

/** One webhook refused before any run existed, as kept for its flow. */
export interface RefusedDelivery {
  flowId: string;
  receivedAt: Date;
  /** The error code of the answer (WEBHOOK_SIGNATURE_INVALID, BODY_TOO_LARGE, …). */
  code: string;
  message: string;
  httpStatus: number;
  method: string;
  sync: boolean;
  /** The connection's peer address (the proxy's, behind one). */
  sourceAddress: string;
  /** The request's headers without credentials (delivery-headers.ts). */
  headers: Record<string, string>;
  /** Further refusals of the flow folded into this one (over the per-second cap). */
  suppressed: number;
}

export interface RefusedDeliveriesRepository {
  /**
   * Inserts the refusals of flows that exist (others are dropped), without the flow's own
   * signature header, then keeps only the newest `keepPerFlow` of each flow written to.
   * Two statements whatever the number of rows. Returns how many rows were written.
   */
  insert(rows: readonly RefusedDelivery[], keepPerFlow: number): Promise<number>;
  /** The flow's refusals, newest first. */
  list(flowId: string, limit: number): Promise<RefusedDelivery[]>;
  /** Deletes refusals older than `days`; returns how many. */
  removeOlderThan(days: number): Promise<number>;
}

interface Row {
  flow_id: string;
  received_at: Date;
  code: string;
  message: string;
  http_status: number;
  method: string;
  sync: boolean;
  source_address: string;
  headers: Record<string, string>;
  suppressed: number;
}

const toDelivery = (row: Row): RefusedDelivery => ({
  flowId: row.flow_id,
  receivedAt: row.received_at,
  code: row.code,
  message: row.message,
  httpStatus: row.http_status,
  method: row.method,
  sync: row.sync,
  sourceAddress: row.source_address,
  headers: row.headers,
  suppressed: row.suppressed,
});

// The batch travels as one JSON parameter; the join drops unknown and deleted flows, and the
// published version's signature header is removed whatever its name.
const INSERT = `
  WITH given AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS g(
      flow_id text, received_at timestamptz, code text, message text, http_status int,
      method text, sync boolean, source_address text, headers jsonb, suppressed int)
  ), inserted AS (
    INSERT INTO refused_deliveries
      (flow_id, received_at, code, message, http_status, method, sync, source_address, headers, suppressed)
    SELECT g.flow_id, g.received_at, g.code, g.message, g.http_status, g.method, g.sync,
      g.source_address, g.headers - coalesce(v.definition->'trigger'->'verify'->>'header', ''), g.suppressed
    FROM given g
    JOIN flows f ON f.id = g.flow_id AND f.deleted_at IS NULL
    LEFT JOIN flow_versions v ON v.id = f.published_version_id
    RETURNING flow_id
  )
  SELECT flow_id, count(*)::int AS written FROM inserted GROUP BY flow_id`;

const TRIM = `
  DELETE FROM refused_deliveries WHERE id IN (
    SELECT id FROM (
      SELECT id, row_number() OVER (PARTITION BY flow_id ORDER BY received_at DESC, id DESC) AS n
      FROM refused_deliveries WHERE flow_id = ANY($1::text[])
    ) ranked WHERE n > $2)`;

export function createRefusedDeliveriesRepository(pool: Pool): RefusedDeliveriesRepository {
  return {
    async insert(rows, keepPerFlow) {
      if (rows.length === 0) return 0;
      const batch = rows.map((row) => ({
        flow_id: row.flowId,
        received_at: row.receivedAt.toISOString(),
        code: row.code,
        message: row.message,
        http_status: row.httpStatus,
        method: row.method,
        sync: row.sync,
        source_address: row.sourceAddress,
        headers: row.headers,
        suppressed: row.suppressed,
      }));
      const { rows: flows } = await pool.query<{ flow_id: string; written: number }>(INSERT, [
        JSON.stringify(batch),
      ]);
      if (flows.length === 0) return 0;
      await pool.query(TRIM, [flows.map((flow) => flow.flow_id), keepPerFlow]);
      return flows.reduce((sum, flow) => sum + flow.written, 0);
    },

    async list(flowId, limit) {
      const { rows } = await pool.query<Row>(
        `SELECT flow_id, received_at, code, message, http_status, method, sync, source_address, headers, suppressed
         FROM refused_deliveries WHERE flow_id = $1 ORDER BY received_at DESC, id DESC LIMIT $2`,
        [flowId, limit],
      );
      return rows.map(toDelivery);
    },

    async removeOlderThan(days) {
      const result = await pool.query(
        'DELETE FROM refused_deliveries WHERE received_at < now() - make_interval(days => $1)',
        [days],
      );
      return result.rowCount ?? 0;
    },
  };
}
