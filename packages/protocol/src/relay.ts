import { z } from 'zod';

/**
 * engine ⇄ worker over the sandbox relay (EXECUTION_MODE=SANDBOXED), HTTP on a Unix socket the
 * worker binds into the sandbox. The engine has no network of its own: its job names the relay
 * as the log upload's URL (and as `appUrl`, which it does not call: its callbacks go over IPC,
 * ipc.ts), and code steps' `fetch` and pieces' `ctx.fetch` post here.
 *
 *   POST /log-upload                                      forwarded to this run's presigned form
 *   POST /checkpoint-upload                               forwarded to this run's checkpoint form
 *   GET  /checkpoint                                      a resumed run's checkpoint (presigned GET)
 *   POST /fetch        RelayFetchRequest → RelayFetchAnswer, under the worker's egress policy
 *
 * Anything else, or anything while no run is in progress, is refused with 403.
 */
export const RELAY_ORIGIN = 'http://relay';
export const RELAY_PATHS = {
  logUpload: '/log-upload',
  checkpointUpload: '/checkpoint-upload',
  checkpoint: '/checkpoint',
  fetch: '/fetch',
} as const;
/** Where the relay's socket is inside the sandbox. */
export const RELAY_SOCKET_IN_SANDBOX = '/run/flowbox/relay.sock';

export const RelayFetchRequestSchema = z.object({
  url: z.string(),
  method: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.string().optional(),
  /** `base64`: the answer's body is the response's bytes in base64 (a piece asked for binary). */
  responseEncoding: z.enum(['text', 'base64']).optional(),
});

export const RelayFetchAnswerSchema = z.union([
  z.object({
    response: z.object({
      status: z.number().int(),
      headers: z.record(z.string(), z.string()),
      body: z.string(),
      url: z.string(),
    }),
  }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
]);
export type RelayFetchAnswer = z.infer<typeof RelayFetchAnswerSchema>;
