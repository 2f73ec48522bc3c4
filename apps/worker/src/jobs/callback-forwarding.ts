import {
  CALLBACK_ENVELOPE_BYTES,
  type CallbackAnswer,
  callbackRefusal,
  type DispatchedJob,
  type EngineCallback,
} from '@flowbox/protocol';

/** Passes an engine's callback on to the app and resolves with its answer (app-connection.ts). */
export type ForwardCallback = (callback: EngineCallback) => Promise<CallbackAnswer>;

/**
 * What the worker lets through for the job it holds: its own run's callbacks, with its own token,
 * each within the app's frame limit (the run log's size and an envelope, as the HTTP body limit),
 * so an engine cannot speak for another run nor get the worker's socket dropped by a huge frame.
 * The app checks the token again; this only keeps a hostile engine from using the worker's line.
 */
export function forwardingFor(
  job: Pick<DispatchedJob, 'runId' | 'engineToken' | 'logUpload'>,
  forward: ForwardCallback,
): ForwardCallback {
  const maxBytes = job.logUpload.maxBytes + CALLBACK_ENVELOPE_BYTES;
  return async (callback) => {
    if (callback.runId !== job.runId || callback.engineToken !== job.engineToken) {
      return callbackRefusal('FORBIDDEN', "not this job's run or engine token");
    }
    const bytes = Buffer.byteLength(JSON.stringify(callback.report), 'utf8');
    if (bytes > maxBytes) {
      return callbackRefusal(
        'BODY_TOO_LARGE',
        `the ${callback.report.type} report is ${bytes} bytes, over ${maxBytes}`,
      );
    }
    return forward(callback);
  };
}
