import type { onSendHookHandler } from 'fastify';
import { deliveryHeaders } from '../deliveries/delivery-headers.ts';
import type { RefusedDeliveries } from '../deliveries/refused-deliveries.ts';

/**
 * The webhook routes' onSend hook that notes every answer refusing the webhook without creating
 * a run (an error status, no `runIdHeader`): a bad signature, a body too large or not parsable,
 * a full queue, a disabled or unpublished flow. Noting is in memory (RefusedDeliveries); unknown
 * flows are dropped when the batch is written.
 */
export function noteRefusals(
  refused: Pick<RefusedDeliveries, 'record'>,
  runIdHeader: string,
): onSendHookHandler {
  return (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !reply.hasHeader(runIdHeader)) {
      const error = errorOf(payload);
      const params = request.params as { flowId?: unknown } | undefined;
      if (error !== null && typeof params?.flowId === 'string') {
        refused.record({
          flowId: params.flowId,
          code: error.code,
          message: error.message,
          httpStatus: reply.statusCode,
          method: request.method,
          sync: request.routeOptions.url?.endsWith('/sync') ?? false,
          sourceAddress: request.ip,
          headers: deliveryHeaders(request.headers),
        });
      }
    }
    done(null, payload);
  };
}

/** The code and message of an error answer as serialized, or null for any other body. */
function errorOf(payload: unknown): { code: string; message: string } | null {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return null;
  try {
    const { error } = JSON.parse(payload) as { error?: { code?: unknown; message?: unknown } };
    if (typeof error?.code !== 'string') return null;
    return { code: error.code, message: typeof error.message === 'string' ? error.message : '' };
  } catch {
    return null;
  }
}
