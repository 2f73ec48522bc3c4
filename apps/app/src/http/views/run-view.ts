import {
  JobProvisioningSchema,
  JobTimingsSchema,
  RunIsolationSchema,
  RunStatusSchema,
  SerializedErrorSchema,
  StepResultSchema,
} from '@flowbox/protocol';
import { z } from 'zod';
import { DateTime } from './date-time.ts';

/** A run in a list: everything but its steps (the list is for timings; read a run for its steps). */
export const RunSummaryView = z
  .object({
    id: z.uuid(),
    flowId: z.string(),
    flowVersionId: z.string(),
    status: RunStatusSchema,
    sync: z.boolean().describe('Started by the sync webhook (the caller waits for its answer).'),
    error: SerializedErrorSchema.nullable(),
    logKey: z.string().nullable(),
    logError: SerializedErrorSchema.nullable().describe('Why the run log could not be stored.'),
    timings: JobTimingsSchema.extend({ totalMs: z.number() }).nullable(),
    provisioning: JobProvisioningSchema.nullable(),
    isolation: RunIsolationSchema.nullable().describe(
      "How the worker kept the run apart from others: `isolate` (a V8 isolate of its own in a reused engine), `process` (a fresh engine process, as for a flow whose piece needs Node on an isolate worker), `shared` (a reused engine's realm). Null until a worker reported the run.",
    ),
    workerId: z.string().nullable(),
    attempts: z.number().int().min(0),
    createdAt: DateTime,
    startedAt: DateTime.nullable(),
    finishedAt: DateTime.nullable(),
    rerunOf: z
      .uuid()
      .nullable()
      .describe(
        'The run this one re-runs (`POST /v1/runs/{runId}/rerun`); it may since be deleted by retention.',
      ),
    source: z
      .enum(['webhook', 'schedule', 'manual', 'rerun', 'error_flow'])
      .describe(
        "What started the run: its flow's webhook, a schedule tick, a manual run (`POST /v1/flows/{flowId}/runs`), a re-run, or a failed run's error flow (`onFailure`; see `causedBy`).",
      ),
    resumes: z.number().int().min(0).describe('How many times the run resumed after a pause.'),
    pausedAt: DateTime.nullable().describe('When the run paused; null unless it is PAUSED.'),
  })
  .meta({ id: 'RunSummary' });
export type RunSummaryView = z.infer<typeof RunSummaryView>;

/** What a flow's response step answered, while the run is in flight. */
const FlowResponse = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.unknown()),
  body: z.unknown(),
});

/** One waiting point of a paused run. */
const RunWaitView = z
  .object({
    path: z.string().describe("The waiting step's path (`each[2]/approval` in a loop's third iteration)."),
    kind: z.enum(['delay', 'request', 'approval', 'flow', 'retry']),
    resumeAt: DateTime.nullable().describe('delay, retry: when the run resumes.'),
    timeoutAt: DateTime.nullable().describe('request, approval, flow: when the wait times out.'),
    childRunId: z.uuid().nullable().describe('flow: the child run it waits for.'),
    answered: z.boolean().describe("A request (or the child run's end) has arrived for it."),
  })
  .meta({ id: 'RunWait' });

export const RunView = RunSummaryView.extend({
  steps: z.array(StepResultSchema),
  waits: z
    .array(RunWaitView)
    .describe('While the run is PAUSED: where it waits and what resumes it; empty otherwise.'),
  reruns: z.array(z.uuid()).describe('The runs that re-run this one, oldest first.'),
  causedBy: z
    .uuid()
    .nullable()
    .describe('For a run of an error flow: the failed run whose flow names it as `onFailure`.'),
  errorRun: z
    .uuid()
    .nullable()
    .describe("The run of its flow's error flow (`onFailure`) that this run's failure started."),
  errorFlowSkipped: z
    .string()
    .nullable()
    .describe("Why this failed run's error flow could not start (deleted, unpublished or disabled)."),
  logUrl: z.url().nullable().describe('A presigned link to the run log, valid for 15 minutes.'),
  response: FlowResponse.nullable()
    .optional()
    .describe('While the run is in flight: the response its flow gave, once given.'),
}).meta({
  id: 'Run',
  description: 'One run: status, steps, error, latency anatomy and a link to its log.',
});
export type RunView = z.infer<typeof RunView>;
export type StepView = RunView['steps'][number];
export type TimingsView = NonNullable<RunView['timings']>;

export const RunPageView = z
  .object({
    runs: z.array(RunSummaryView),
    nextCursor: z
      .string()
      .nullable()
      .describe("The next page's cursor; null when this page holds the last runs there are now."),
  })
  .meta({ id: 'RunPage' });
export type RunPageView = z.infer<typeof RunPageView>;

export const RunAcceptedView = z
  .object({ runId: z.uuid() })
  .meta({ id: 'RunAccepted', description: 'A run accepted: read it with GET /v1/runs/{runId}.' });

export const RerunAcceptedView = z
  .object({
    runId: z.uuid(),
    rerunOf: z.uuid(),
    flowVersionId: z.string().describe('The flow version the new run runs.'),
  })
  .meta({ id: 'RerunAccepted', description: 'The new run, the run it re-runs and the version it runs.' });
