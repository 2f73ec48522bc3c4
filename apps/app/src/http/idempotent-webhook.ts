import { createHash } from 'node:crypto';
import { FlowboxError, isFinalRunStatus, type SyncMessage } from '@flowbox/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunProgressStore } from '../runs/run-progress-store.ts';
import type { IdempotencyKey, NewIdempotencyKey, RunsRepository } from '../runs/runs-repository.ts';
import type { SyncOutcome, SyncResponseHub } from '../sync/sync-response-hub.ts';
import type { ReceivedWebhookBody } from './webhook-body.ts';

/** The request header (the IETF httpapi Idempotency-Key draft's field). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Printable ASCII without spaces at the ends, 1–255 characters. */
const KEY = /^[\x21-\x7e]([\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export interface IdempotencyDeps {
  runs: Pick<RunsRepository, 'idempotencyKey' | 'keepAnswer' | 'get'>;
  progress: Pick<RunProgressStore, 'read'>;
  hub: SyncResponseHub;
  /** IDEMPOTENCY_TTL_HOURS. */
  idempotencyTtlHours: number;
}

/**
 * The request's `Idempotency-Key` with the sha256 of its raw body, or null without the header.
 * The draft sends the key as a structured-field string (`"abc"`); a bare token is taken as well.
 * A repeated, empty or overlong key is 400.
 */
export function idempotencyKeyOf(request: FastifyRequest, ttlHours: number): NewIdempotencyKey | null {
  const header = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (header === undefined) return null;
  const raw = Array.isArray(header) ? null : header.trim();
  const key = raw !== null && /^".*"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (key === null || !KEY.test(key)) {
    throw new FlowboxError(
      'INVALID_REQUEST',
      'Idempotency-Key must be one value of 1 to 255 printable ASCII characters',
    );
  }
  // The bytes as sent (not rawBody: text that is not UTF-8 decodes with U+FFFD); none without a body.
  const body = (request.body as ReceivedWebhookBody | undefined)?.bytes ?? Buffer.alloc(0);
  return { key, bodySha256: createHash('sha256').update(body).digest('hex'), ttlHours };
}

/**
 * A repeat of a live key gets its run, never a new one: with another body, or on the other of
 * the sync and async routes, it is 422 IDEMPOTENCY_KEY_REUSED.
 */
export function checkRepeat(
  flowId: string,
  sent: NewIdempotencyKey,
  sync: boolean,
  kept: IdempotencyKey,
): void {
  if (kept.bodySha256 !== sent.bodySha256) {
    throw new FlowboxError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key ${sent.key} of flow ${flowId} was sent with another body (run ${kept.runId}); use a new key for a new request`,
    );
  }
  if (kept.sync !== sync) {
    throw new FlowboxError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency-Key ${sent.key} of flow ${flowId} was sent to the ${kept.sync ? 'sync' : 'async'} webhook (run ${kept.runId})`,
    );
  }
}

/**
 * What a repeated sync request waits for: the answer kept on the key, else the run's end when
 * it has ended (its response from the run's progress, else its status and error), else the
 * answer the first caller's app broadcasts, within `timeoutMs`. The waiter is registered before
 * the key is read again, so an answer kept and broadcast meanwhile is not missed.
 */
export async function awaitRepeatAnswer(
  deps: IdempotencyDeps,
  flowId: string,
  key: string,
  runId: string,
  timeoutMs: number,
  callerGone: AbortSignal,
): Promise<SyncOutcome> {
  const waiter = deps.hub.register(runId);
  try {
    const kept = (await deps.runs.idempotencyKey(flowId, key))?.answer ?? null;
    if (kept !== null) {
      waiter.cancel();
      return kept;
    }
    const run = await deps.runs.get(runId);
    if (run !== null && isFinalRunStatus(run.status)) {
      waiter.cancel();
      const { response } = await deps.progress.read(runId).catch(() => ({ response: null }));
      const ended: SyncMessage =
        response !== null
          ? { version: 1, type: 'flow-response', runId, response }
          : {
              version: 1,
              type: 'run-ended',
              runId,
              status: run.status,
              ...(run.error === null ? {} : { error: run.error }),
            };
      await deps.runs.keepAnswer(flowId, key, runId, ended);
      return ended;
    }
  } catch (error) {
    waiter.cancel();
    throw error;
  }
  return waiter.wait(timeoutMs, callerGone);
}

/**
 * The first caller's answer, kept on its key and sent to the callers repeating it on every app.
 * A timeout or a caller who left is no answer: nothing is kept.
 */
export async function shareAnswer(
  deps: IdempotencyDeps,
  request: FastifyRequest,
  flowId: string,
  key: string,
  outcome: SyncOutcome,
): Promise<void> {
  if (outcome.type !== 'flow-response' && outcome.type !== 'run-ended') return;
  try {
    await deps.runs.keepAnswer(flowId, key, outcome.runId, outcome);
    await deps.hub.broadcast(outcome);
  } catch (error) {
    request.log.warn({ err: error, runId: outcome.runId }, "could not keep a sync run's answer for its key");
  }
}

/** The caller of a repeat leaving: its wait ends (`caller-gone`); the run is the first caller's. */
export function callerGoneSignal(reply: FastifyReply): { signal: AbortSignal; done(): void } {
  const left = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableEnded) left.abort();
  };
  reply.raw.once('close', onClose);
  return { signal: left.signal, done: () => reply.raw.off('close', onClose) };
}
