import { type FlowDefinition, FlowDefinitionSchema } from '@flowbox/protocol';
import type { Pool } from './pool.ts';

export interface PublishedFlow {
  flowId: string;
  flowVersionId: string;
  enabled: boolean;
}

export interface FlowsRepository {
  /** The flow's published version, or null when the flow does not exist or has none. */
  findPublished(flowId: string): Promise<PublishedFlow | null>;
  /** A flow version's definition; versions are immutable, so callers may cache it. */
  getDefinition(flowVersionId: string): Promise<FlowDefinition | null>;
  /** Creates a flow with one published version unless the flow id exists already. */
  ensureFlow(input: {
    flowId: string;
    name: string;
    flowVersionId: string;
    definition: FlowDefinition;
  }): Promise<boolean>;
}

export function createFlowsRepository(pool: Pool): FlowsRepository {
  return {
    async findPublished(flowId) {
      const { rows } = await pool.query<{
        id: string;
        published_version_id: string | null;
        enabled: boolean;
      }>('SELECT id, published_version_id, enabled FROM flows WHERE id = $1', [flowId]);
      const row = rows[0];
      if (row === undefined || row.published_version_id === null) return null;
      return { flowId: row.id, flowVersionId: row.published_version_id, enabled: row.enabled };
    },

    async getDefinition(flowVersionId) {
      const { rows } = await pool.query<{ definition: unknown }>(
        'SELECT definition FROM flow_versions WHERE id = $1',
        [flowVersionId],
      );
      const row = rows[0];
      return row === undefined ? null : FlowDefinitionSchema.parse(row.definition);
    },

    async ensureFlow({ flowId, name, flowVersionId, definition }) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const inserted = await client.query(
          'INSERT INTO flows (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
          [flowId, name],
        );
        if (inserted.rowCount === 0) {
          await client.query('ROLLBACK');
          return false;
        }
        await client.query('INSERT INTO flow_versions (id, flow_id, definition) VALUES ($1, $2, $3)', [
          flowVersionId,
          flowId,
          JSON.stringify(definition),
        ]);
        await client.query('UPDATE flows SET published_version_id = $2, updated_at = now() WHERE id = $1', [
          flowId,
          flowVersionId,
        ]);
        await client.query('COMMIT');
        return true;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
