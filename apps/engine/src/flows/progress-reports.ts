import type { StepResult } from '@flowbox/protocol';
import type { AppClient } from '../host/app-client.ts';

/**
 * Progress reports: the steps finished since the last one, at most every `intervalMs` and never
 * holding up the flow. The response callback takes what is pending; what is left at the end goes
 * with the worker's result, so a fast flow makes no progress call. A refused report (run ended,
 * token expired) stops the run before its next step.
 */
export function createProgressReports(app: AppClient, intervalMs: number) {
  let pending: StepResult[] = [];
  let inFlight: Promise<void> = Promise.resolve();
  let refused: unknown;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  let nextFlushAt = performance.now() + intervalMs;
  const flush = () => {
    timer = undefined;
    nextFlushAt = performance.now() + intervalMs;
    if (pending.length === 0 || refused !== undefined) return;
    const batch = pending;
    pending = [];
    inFlight = inFlight
      .then(() => (refused === undefined ? app.reportSteps(batch) : undefined))
      .catch((error: unknown) => {
        refused ??= error;
      });
  };
  return {
    report(step: StepResult): void {
      pending.push(step);
      if (ended || timer !== undefined) return;
      // Due now: send it now, ahead of a response step that would otherwise take it.
      const wait = nextFlushAt - performance.now();
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    },
    throwIfRefused(): void {
      if (refused !== undefined) throw refused;
    },
    /** Stops reporting; resolves once the report in flight has answered. */
    async settled(): Promise<void> {
      ended = true;
      clearTimeout(timer);
      await inFlight;
      if (refused !== undefined) throw refused;
    },
    /** Waits for the report in flight, then takes the steps no report carried; for the response. */
    async takeForResponse(): Promise<StepResult[]> {
      await inFlight;
      if (refused !== undefined) throw refused;
      const batch = pending;
      pending = [];
      return batch;
    },
  };
}
