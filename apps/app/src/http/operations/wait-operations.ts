import { EXAMPLE_IDS, errorExample } from '../api-examples.ts';
import type { ApiOperation, OperationResponse } from '../api-operation.ts';
import { WaitAnsweredView, WaitParams } from '../views/wait-view.ts';
import { WEBHOOK_BODIES, WebhookQuery } from '../views/webhook-request.ts';
import { errors, SERVER_LIMITS } from './responses.ts';

const WAIT_NOTE =
  "A wait step's URLs, as the steps before it read them (`{{waits.<name>.resumeUrl}}`, `syncUrl`, `approveUrl`, `rejectUrl`). The request's `method`, `body` (parsed as a webhook's), `query` and `headers` (credentials left out) become the step's output; an approval's URLs add `approved`. A request wait answers its plain and `/sync` URLs, an approval its `/approve` and `/reject` URLs. A request that arrives before the run reaches its wait is kept and used when it does.";

const ANSWERED: OperationResponse = { description: 'Answered: the run resumes.', view: WaitAnsweredView };
const NOT_FOUND: OperationResponse = {
  ...errors(404)[404],
  description:
    'No such run (or retention deleted it), a wrong token, or the path names no wait of this kind (RUN_NOT_FOUND): nothing tells which.',
} as OperationResponse;
const ALREADY: OperationResponse = {
  ...errors(409)[409],
  description: 'The wait was answered already (WAIT_ALREADY_RESUMED, naming the run).',
} as OperationResponse;
const ENDED: OperationResponse = {
  ...errors(410)[410],
  description: 'The run has ended: nothing waits (WAIT_ENDED).',
} as OperationResponse;

type Route = 'resume' | 'sync' | 'approve' | 'reject';
const SUFFIX: Record<Route, string> = { resume: '', sync: '/sync', approve: '/approve', reject: '/reject' };
const SUMMARY: Record<Route, string> = {
  resume: "Answers a request wait: the request becomes the step's output and the run resumes.",
  sync: "Answers a request wait and holds the request until the run's next response step answers it.",
  approve: 'Approves an approval wait (`approved: true`) and resumes the run.',
  reject: 'Rejects an approval wait (`approved: false`) and resumes the run.',
};

function waitOperation(route: Route, method: 'GET' | 'POST') {
  const id = `${route === 'resume' ? 'resumeWait' : `${route}Wait`}${method === 'GET' ? 'Get' : ''}`;
  const sync = route === 'sync';
  return {
    operationId: id,
    method,
    url: `/v1/waits/:runId/:path/:token${SUFFIX[route]}`,
    tag: 'waits',
    summary: SUMMARY[route],
    description: sync
      ? `${WAIT_NOTE} Answered like a sync webhook: the flow's response, 204 when the run ended with none, 504 with the run id past WEBHOOK_TIMEOUT_SECONDS (the run goes on).`
      : WAIT_NOTE,
    auth: 'public',
    params: WaitParams,
    query: WebhookQuery,
    ...(method === 'POST' ? { body: WEBHOOK_BODIES } : {}),
    ...(sync ? { passThrough: true } : {}),
    responses: {
      ...(sync
        ? {
            200: { description: "The run's next response step's status, headers and body." },
            204: { description: 'The run ended and no step answered.' },
          }
        : { 202: ANSWERED }),
      ...errors(400),
      404: NOT_FOUND,
      409: ALREADY,
      410: ENDED,
      ...(method === 'POST' ? errors(413) : {}),
      ...errors(503),
      ...(sync ? errors(504) : {}),
      ...SERVER_LIMITS,
    },
    example: sync
      ? {
          status: 409,
          response: errorExample(
            'WAIT_ALREADY_RESUMED',
            `the wait approval of run ${EXAMPLE_IDS.RUN_ID} was answered already`,
          ),
        }
      : { status: 202, response: { runId: EXAMPLE_IDS.RUN_ID, resumed: true } },
  } as const satisfies ApiOperation;
}

/** The wait URLs: public (the token is the credential), each a GET (a clicked link) and a POST. */
export const WAIT_OPERATIONS = {
  resumeWait: waitOperation('resume', 'POST'),
  resumeWaitGet: waitOperation('resume', 'GET'),
  syncWait: waitOperation('sync', 'POST'),
  syncWaitGet: waitOperation('sync', 'GET'),
  approveWait: waitOperation('approve', 'POST'),
  approveWaitGet: waitOperation('approve', 'GET'),
  rejectWait: waitOperation('reject', 'POST'),
  rejectWaitGet: waitOperation('reject', 'GET'),
} as const satisfies Record<string, ApiOperation>;
