import { z } from 'zod';
import { DateTime } from './date-time.ts';

export const RefusedDeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

export const RefusedDeliveryView = z
  .object({
    receivedAt: DateTime,
    code: z.string().describe('The error code the sender was answered with.'),
    message: z.string(),
    httpStatus: z.number().int(),
    method: z.string(),
    sync: z.boolean().describe('Sent to the sync webhook.'),
    sourceAddress: z.string().describe("The connection's peer address (a proxy's, behind one)."),
    headers: z
      .record(z.string(), z.string())
      .describe(
        "The request's headers without credentials: no authorization, cookie, API key, the flow's signature header, or any header named for a signature, token, secret or session.",
      ),
    suppressed: z
      .number()
      .int()
      .min(0)
      .describe('Further refusals of this flow within the same second, counted here rather than kept.'),
  })
  .meta({
    id: 'RefusedDelivery',
    description: 'A webhook refused before any run existed: nothing ran, nothing was queued.',
  });
export type RefusedDeliveryView = z.infer<typeof RefusedDeliveryView>;

export const RefusedDeliveryListView = z
  .object({ deliveries: z.array(RefusedDeliveryView).describe('Newest first.') })
  .meta({ id: 'RefusedDeliveryList' });
