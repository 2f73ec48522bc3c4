/**
 * The API's answers as the inspector reads them: the inferred types of the app's own zod views
 * (type-only imports, so nothing of zod or the app reaches the browser bundle).
 */
import type { RunStatus } from '@flowbox/protocol';

export type {
  FlowScheduleView as FlowSchedule,
  FlowVersionView as VersionView,
  FlowView,
} from '../../src/http/views/flow-view.ts';
export type { RefusedDeliveryView } from '../../src/http/views/refused-delivery-view.ts';
export type { RunStatsView as RunStats } from '../../src/http/views/run-stats-view.ts';
export type {
  RunPageView as RunPage,
  RunSummaryView as RunSummary,
  RunView,
  StepView,
  TimingsView as Timings,
} from '../../src/http/views/run-view.ts';
export type { RunStatus };

/** Every status, so the compiler notices one added to RunStatusSchema. */
const STATUS_ORDER: Record<RunStatus, number> = {
  QUEUED: 0,
  RUNNING: 1,
  PAUSED: 2,
  SUCCEEDED: 3,
  FAILED: 4,
  TIMEOUT: 5,
  INTERNAL_ERROR: 6,
};

/** The filter's choices, in the order a run goes through them. */
export const RUN_STATUSES = Object.keys(STATUS_ORDER) as RunStatus[];

export function isFinal(status: RunStatus): boolean {
  return status !== 'QUEUED' && status !== 'RUNNING' && status !== 'PAUSED';
}
