import type { OperationResponse } from '../api-operation.ts';
import { ErrorView } from '../views/error-view.ts';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY).',
  401: 'No key or the wrong one (UNAUTHORIZED).',
  404: 'No such flow, version, run, piece or connection.',
  409: 'A conflict: a piece version that exists with another archive, a connection name that is taken (CONNECTION_EXISTS), or a connection published flow versions use (CONNECTION_IN_USE, naming them).',
  410: "The run's trigger request is gone (retention, or it predates kept requests).",
  413: 'The body is over WEBHOOK_BODY_LIMIT_BYTES (BODY_TOO_LARGE).',
  422: "The Idempotency-Key was sent before with another body, or to the other of the sync and async webhooks, within IDEMPOTENCY_TTL_HOURS (IDEMPOTENCY_KEY_REUSED, naming the key's run); no run was created.",
  429: 'The flow has too many queued or running runs (admission).',
  500: 'An internal error.',
  502: "The flow's run failed before it answered.",
  503: 'Redis or Postgres is unavailable, or the app is draining; retry later.',
  504: 'No answer within WEBHOOK_TIMEOUT_SECONDS.',
};

/** Error answers (the Error view) for these statuses, each with what it means. */
export const errors = (...statuses: number[]): Record<number, OperationResponse> =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: ERROR_DESCRIPTIONS[status] ?? 'error', view: ErrorView },
    ]),
  );

/** What any operation behind the API key may answer besides its own responses. */
export const API_KEY_LIMITED: Record<number, OperationResponse> = {
  429: {
    description:
      'Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused.',
    view: ErrorView,
  },
};

/** What `GET /metrics` may answer when METRICS_TOKEN is set and an address guessed too often. */
export const METRICS_TOKEN_LIMITED: Record<number, OperationResponse> = {
  429: {
    description:
      'Too many wrong metrics tokens from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED, counted apart from API keys), with `retry-after`; the right token is never refused.',
    view: ErrorView,
  },
};

/** A signed flow's webhook (trigger.verify) refused before any run was created. */
export const SIGNATURE_REFUSED: Record<number, OperationResponse> = {
  401: {
    description:
      "The flow is signed (trigger.verify) and the request's signature is missing, repeated, stale or wrong (WEBHOOK_SIGNATURE_INVALID); no run was created.",
    view: ErrorView,
  },
};

/** Refused by the server before any route, in Node's and fastify's own words (no Error body). */
export const SERVER_LIMITS: Record<number, OperationResponse> = {
  414: { description: 'A flow id longer than 100 characters (fastify maxParamLength).' },
  431: {
    description: 'Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize).',
  },
};

/** A webhook of a flow whose trigger is a schedule. */
export const NOT_A_WEBHOOK: Record<number, OperationResponse> = {
  409: {
    description:
      "The flow's trigger is a schedule or polls (FLOW_NOT_WEBHOOK): it starts from its ticks or polls, or by hand (POST /v1/flows/{flowId}/runs); no run was created.",
    view: ErrorView,
  },
};
