import ms from 'ms';
import { z } from 'zod';
import { SerializedErrorSchema } from './errors.ts';

/**
 * Durable runs: a run that reaches a `delay`, a `wait`, a waiting sub-flow or a retry's backoff
 * pauses (run status PAUSED) and frees its worker; a later job resumes it on any worker.
 *
 *   engine ── outcome PAUSED + `pause` ──▶ worker ──▶ app   the steps so far; the run's
 *            checkpoint uploaded first (presigned, `checkpointUpload`)
 *   app: run PAUSED, one `run_waits` row per waiting point; a delayed job per timer
 *   app ── job with `resume` ──▶ worker ──▶ engine   on time, on a request, on a child's end
 *   engine: replays the checkpoint's steps by path (not run again), continues where it paused
 *
 * The checkpoint holds what a resume needs that the run's record may not (the log drops large
 * outputs and redacts): each finished step's output as the step returned it, by path.
 */

/** A duration in milliseconds from its written form (`"5s"`, `"24h"`, `1500`); undefined when it is not one. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const parsed = ms(value.trim() as ms.StringValue);
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed >= 0
    ? Math.round(parsed)
    : undefined;
}

/** What a paused step waits for. `retry`: a failed step's next attempt after its backoff. */
export const WaitPointKindSchema = z.enum(['delay', 'request', 'approval', 'flow', 'retry']);
export type WaitPointKind = z.infer<typeof WaitPointKindSchema>;

/**
 * One place where a paused run waits: a step (by path; several in parallel loop iterations or
 * router branches) and what resumes it. A run resumes when any of its waiting points is due:
 * a timer's `resumeAt` passed, a request reached its URL, its child run ended.
 */
export const WaitPointSchema = z.object({
  path: z.string().min(1),
  step: z.string().min(1),
  kind: WaitPointKindSchema,
  /** delay, retry: when to resume. */
  resumeAt: z.iso.datetime().optional(),
  /** request, approval, flow (wait: true): past it the step fails WAIT_TIMEOUT (absent: RUN_MAX_PAUSE_DAYS). */
  timeoutAt: z.iso.datetime().optional(),
  /** flow: the child run the step started. */
  childRunId: z.string().optional(),
});
export type WaitPoint = z.infer<typeof WaitPointSchema>;

/** How a run paused (RunOutcome.pause): where it waits, and the checkpoint the engine wrote. */
export const RunPauseSchema = z.object({
  waits: z.array(WaitPointSchema).min(1).max(1_000),
  /** The checkpoint's key in the bucket (the job's `checkpointUpload.key`). */
  checkpointKey: z.string().min(1),
});
export type RunPause = z.infer<typeof RunPauseSchema>;

/** What a resume knows of one step of the paused run: done (replayed), or waiting with its state. */
export const CheckpointStepSchema = z.object({
  status: z.enum(['SUCCEEDED', 'FAILED', 'WAITING']),
  /** SUCCEEDED: the output as the step returned it; FAILED with continueOnFailure: its error output. */
  output: z.unknown().optional(),
  /** FAILED (continueOnFailure): the error recorded. */
  error: SerializedErrorSchema.optional(),
  /** delay: the time it waits for, fixed when first reached; WAITING retry: the next attempt's time. */
  until: z.iso.datetime().optional(),
  /** retry: the attempts made so far, each with its error. */
  attempts: z
    .array(z.object({ error: SerializedErrorSchema, startedAt: z.iso.datetime(), durationMs: z.number() }))
    .optional(),
  /** flow: the child run started; request/approval: when the wait began. */
  childRunId: z.string().optional(),
  since: z.iso.datetime().optional(),
});
export type CheckpointStep = z.infer<typeof CheckpointStepSchema>;

/** The checkpoint the engine uploads when a run pauses (presigned PUT): its steps by path. */
export const CheckpointSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  flowVersionId: z.string(),
  /** Paused how many times before this one (0 the first time). */
  resumes: z.number().int().nonnegative(),
  steps: z.record(z.string(), CheckpointStepSchema),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/**
 * Why a job resumes a run (EngineJob.resume, DispatchedJob.resume): the checkpoint to replay
 * (presigned GET) and what arrived for waiting points, by path: a request's
 * `{ method, body, query, headers }` (approvals add `approved`), a child run's end
 * (`{ runId, status, response?, error? }`). A timer needs no value: its time has come.
 */
export const RunResumeSchema = z.object({
  checkpoint: z.object({ url: z.url(), key: z.string() }),
  values: z.record(z.string(), z.unknown()).default({}),
  /** When the app resumed it, and how late past the earliest due timer (ms; 0 when on time or not a timer). */
  resumedAt: z.iso.datetime(),
  lateMs: z.number().nonnegative().default(0),
});
export type RunResume = z.infer<typeof RunResumeSchema>;

/**
 * What the engine needs to write a run's wait URLs into its templates (`{{waits.<name>.resumeUrl}}`)
 * before the wait is reached: the public base URL and a key scoped to this run. A URL's token is
 * HMAC-SHA256(key, path) in base64url; the app checks it with the same derivation.
 */
export const WaitUrlsSchema = z.object({
  baseUrl: z.url(),
  key: z.string().min(32),
});
export type WaitUrls = z.infer<typeof WaitUrlsSchema>;

/** The wait URLs of one waiting step, as `{{waits.<name>}}` gives them to the steps before it. */
export interface WaitStepUrls {
  /** GET or POST resumes the run; the request becomes the step's output. */
  resumeUrl: string;
  /** The same, held until the run's next response step answers it. */
  syncUrl: string;
  /** Approvals: resume with `approved: true` / `false`. */
  approveUrl: string;
  rejectUrl: string;
}

/**
 * The routes of a wait: `/v1/waits/:runId/:path/:token` (path URI-encoded), with `/sync`,
 * `/approve` or `/reject` after it. `token` is base64url(HMAC-SHA256(key, path)), where `key` is
 * the run's WaitUrls.key: base64url(HMAC-SHA256(WAIT_URL_SECRET, runId)), derived by the app.
 */
export function waitStepUrls(baseUrl: string, runId: string, path: string, token: string): WaitStepUrls {
  const base = `${baseUrl.replace(/\/+$/, '')}/v1/waits/${encodeURIComponent(runId)}/${encodeURIComponent(path)}/${token}`;
  return {
    resumeUrl: base,
    syncUrl: `${base}/sync`,
    approveUrl: `${base}/approve`,
    rejectUrl: `${base}/reject`,
  };
}

/** The template root the wait URLs are under: `{{waits.approval.approveUrl}}`. */
export const WAITS_ROOT = 'waits';
