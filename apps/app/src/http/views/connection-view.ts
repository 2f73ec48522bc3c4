import { ConnectionNameSchema, ConnectionValueSchema } from '@flowbox/protocol';
import { z } from 'zod';
import { DateTime } from './date-time.ts';

/** What the API shows of a connection: never its value. */
export const ConnectionView = z
  .object({
    name: z.string(),
    createdAt: DateTime,
    updatedAt: DateTime,
    usedBy: z
      .array(z.object({ flowId: z.string(), flowVersionId: z.string() }))
      .describe("The flows whose published version references this connection, with that version's id."),
  })
  .meta({ id: 'Connection', description: 'A secret kept encrypted; its value is never shown.' });
export type ConnectionView = z.infer<typeof ConnectionView>;

export const ConnectionListView = z
  .object({ connections: z.array(ConnectionView) })
  .meta({ id: 'ConnectionList' });

const Value = ConnectionValueSchema.describe(
  'A string, or a JSON object of at most 8 KiB as JSON; `{{connections.<name>.<field>}}` reads a field of an object.',
);

export const CreateConnectionBody = z
  .object({ name: ConnectionNameSchema, value: Value })
  .meta({ id: 'CreateConnectionRequest' });

export const UpdateConnectionBody = z.object({ value: Value }).meta({ id: 'UpdateConnectionRequest' });

export const ConnectionParams = z.object({ name: z.string() });
