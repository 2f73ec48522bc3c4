import { EXAMPLE_IDS, RUN_EXAMPLE, RUN_STATS_EXAMPLE, RUN_SUMMARY_EXAMPLE } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import { ListRunsQuery, RerunBody, RunParams, RunStatsQuery } from '../views/run-requests.ts';
import { RunStatsView } from '../views/run-stats-view.ts';
import { RerunAcceptedView, RunPageView, RunView } from '../views/run-view.ts';
import { errors } from './responses.ts';

/** The management API for runs (behind the API key). */
export const RUN_OPERATIONS = {
  getRun: {
    operationId: 'getRun',
    method: 'GET',
    url: '/v1/runs/:runId',
    tag: 'runs',
    summary: 'One run: status, steps, error, latency anatomy and a presigned link to its log.',
    auth: 'apiKey',
    params: RunParams,
    responses: { 200: { description: 'The run.', view: RunView }, ...errors(401, 404) },
    example: { status: 200, response: RUN_EXAMPLE },
  },
  rerunRun: {
    operationId: 'rerunRun',
    method: 'POST',
    url: '/v1/runs/:runId/rerun',
    tag: 'runs',
    summary: "Starts a new run of the run's flow with the same trigger request.",
    description:
      'Asynchronously, on the run\'s own flow version, or the flow\'s published one with `{"version": "latest"}`; the new run\'s `rerunOf` names this one. With `{"from": "failed"}` the steps that succeeded are replayed from the run\'s log and the new run starts at the failed step. 404 when the run, or for `latest` its flow, is gone; 409 (RERUN_NOT_POSSIBLE) for `failed` when the run did not fail or has no log; 410 when the request is gone (retention deleted the run, or it predates kept requests).',
    auth: 'apiKey',
    params: RunParams,
    body: RerunBody,
    bodyOptional: true,
    responses: {
      202: { description: 'The new run, accepted.', view: RerunAcceptedView },
      ...errors(400, 401, 404, 409, 410, 503),
    },
    example: {
      status: 202,
      response: { runId: EXAMPLE_IDS.RERUN_ID, rerunOf: EXAMPLE_IDS.RUN_ID, flowVersionId: 'orders-v2' },
    },
  },
  listRuns: {
    operationId: 'listRuns',
    method: 'GET',
    url: '/v1/runs',
    tag: 'runs',
    summary: 'Runs without their steps, one page at a time.',
    description:
      'Pass `nextCursor` back as `cursor`; filtered by flow, status, a range of creation times (`since`, `until`) and text in the trigger payload (`payload`); oldest first unless `order=newest`.',
    auth: 'apiKey',
    query: ListRunsQuery,
    responses: { 200: { description: 'A page of runs.', view: RunPageView }, ...errors(400, 401) },
    example: { status: 200, response: { runs: [RUN_SUMMARY_EXAMPLE], nextCursor: null } },
  },
  getRunStats: {
    operationId: 'getRunStats',
    method: 'GET',
    url: '/v1/runs/stats',
    tag: 'runs',
    summary: 'Throughput and latency percentiles of the runs accepted in the last `windowSeconds`.',
    description: 'Per `bucketSeconds` and in total, from Postgres (every app instance).',
    auth: 'apiKey',
    query: RunStatsQuery,
    responses: {
      200: { description: 'Figures per bucket, oldest first, empty buckets included.', view: RunStatsView },
      ...errors(400, 401),
    },
    example: { status: 200, response: RUN_STATS_EXAMPLE },
  },
} as const satisfies Record<string, ApiOperation>;
