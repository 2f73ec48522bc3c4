import type { FlowResponse } from '@flowbox/protocol';

export type PieceLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Writes a structured log line for the step; the engine forwards it to the worker. */
export type PieceLog = (level: PieceLogLevel, msg: string, data?: Record<string, unknown>) => void;

/** An HTTP request a piece makes through `ctx.fetch`. */
export interface PieceHttpRequest {
  /** An absolute http(s) URL, its query included. */
  url: string;
  /** Upper case, e.g. `GET`. */
  method: string;
  headers?: Record<string, string>;
  /** Text (JSON and form bodies are text too), at most 1 MiB. */
  body?: string;
  /** The whole exchange's limit, redirects and the body included; past it: `HTTP_REQUEST_TIMEOUT`. */
  timeoutMs?: number;
  /** `base64`: the response body is its bytes in base64, for binary answers. Default `text` (UTF-8). */
  responseEncoding?: 'text' | 'base64';
}

export interface PieceHttpResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * HTTP under the worker's egress policy (EGRESS), made by the engine with the same code as a
 * code step's `fetch`: each hop's host and resolved addresses are checked before a socket opens,
 * redirects are followed here (at most 5), bodies are bounded (1 MiB out, 5 MiB in) and count
 * against the run's fetch budget; in SANDBOXED mode the request leaves through the worker's
 * relay. A refused request rejects with `EGRESS_DENIED` (its message naming the EGRESS value that would allow it), a failed one with
 * `CODE_STEP_FETCH_FAILED` or `CODE_STEP_FETCH_LIMIT`. Any status is an answer, not an error.
 */
export type PieceFetch = (request: PieceHttpRequest) => Promise<PieceHttpResponse>;

/** What an action sees of the run it is part of. */
export interface ActionContext {
  readonly runId: string;
  readonly stepName: string;
  /** Sends the flow's response to the sync webhook caller (through the app). */
  respond(response: FlowResponse): Promise<void>;
  /**
   * The one way a piece should reach the network: it holds in every execution mode, while a
   * piece's own `node:http` has no network in SANDBOXED and no egress check elsewhere.
   */
  fetch: PieceFetch;
  log: PieceLog;
  /**
   * The value of the connection the step names (`"connection": "<name>"`), checked against the
   * action's (or its piece's) `auth`; undefined when it declares none or the step names none.
   */
  readonly auth?: unknown;
}

/** What a trigger sees of the run it starts. */
export interface TriggerContext {
  readonly runId: string;
  readonly stepName: string;
  log: PieceLog;
}
