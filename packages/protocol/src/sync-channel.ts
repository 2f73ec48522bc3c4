import { z } from 'zod';
import { SerializedErrorSchema } from './errors.ts';
import { FinalRunStatusSchema, FlowResponseSchema } from './run.ts';
import { StepTestAnswerSchema } from './step-test.ts';

/**
 * app ⇄ app over Redis pub/sub: the instance that learns a sync run's answer publishes it on
 * the channel of the instance that holds the caller's connection.
 */
export function syncChannelName(prefix: string, instanceId: string): string {
  return `${prefix}:sync:${instanceId}`;
}

/**
 * app → every app: a sync run's answer for the callers that repeated its `Idempotency-Key`, which
 * may wait on any instance. Every instance subscribes; the instance that answered the first caller
 * publishes. (Instance channels end in an instance id, this one in `sync-all`, which no
 * `sync:<id>` channel is.)
 */
export function syncBroadcastChannelName(prefix: string): string {
  return `${prefix}:sync-all`;
}

export const SyncMessageSchema = z.discriminatedUnion('type', [
  z.object({
    version: z.literal(1),
    type: z.literal('flow-response'),
    runId: z.string(),
    response: FlowResponseSchema,
  }),
  /**
   * The run ended without a response step answering: the caller gets 204 when it succeeded, else
   * the flow's errorResponse or an error naming the run (webhook-routes.ts).
   */
  z.object({
    version: z.literal(1),
    type: z.literal('run-ended'),
    runId: z.string(),
    status: FinalRunStatusSchema,
    error: SerializedErrorSchema.optional(),
  }),
  /** A step test's answer (step-test.ts), for the instance holding its caller; `runId` is the test's id. */
  z.object({
    version: z.literal(1),
    type: z.literal('step-tested'),
    runId: z.string(),
    answer: StepTestAnswerSchema,
  }),
]);
export type SyncMessage = z.infer<typeof SyncMessageSchema>;
