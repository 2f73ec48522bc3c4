import type { Logger } from '@flowbox/node-kit';
import type { RunJobData, RunPause, SerializedError, StepResult } from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';
import type { AppMetrics, ResumeCause } from '../metrics/app-metrics.ts';
import type { RunPauses } from './run-lifecycle.ts';
import { pauseRun, resumeRunRow } from './run-waits.ts';

/** Where a resume's job goes (RunQueue): its id is `resume:<runId>:<n>` (runJobId). */
export interface ResumeQueue {
  add(data: RunJobData, rank?: number, options?: { delayMs?: number }): Promise<void>;
  /** As `add`, in place of a job of the same id that is not running (a pause's delayed resume). */
  replace(data: RunJobData): Promise<void>;
}

export interface ResumeOptions {
  /**
   * The pause this call resumes (runs.resumes when it paused): a call meant for an earlier pause
   * resumes nothing. Absent: whichever pause is in force.
   */
  expectedResumes?: number | undefined;
  /** The app holding a sync caller that waits for this run's next answer (a `/sync` wait URL). */
  syncInstanceId?: string | undefined;
  /** What resumed it, for flowbox_runs_resumed_total. */
  cause: ResumeCause;
}

/**
 * Records a run's pause and resumes it. A pause that waits for a time (a delay, a retry's
 * backoff, a wait's timeout) enqueues the job of its resume at once, delayed to that time: the
 * job's start resumes the run (PAUSED → RUNNING, run-start.ts), so a timed pause costs one
 * delayed job. `resume` is the way out of PAUSED for everything else (a wait URL, a child run's
 * end, the reconciler, a pause answered or due already): a conditional UPDATE lets exactly one
 * caller through (and none once the job started the run), which enqueues the resume job in place
 * of the delayed one, due now. Should an enqueue be lost, Postgres holds what the reconciler
 * needs: a QUEUED run is enqueued again, a PAUSED one past its time is resumed.
 */
export class RunResumer {
  readonly #pool: Pool;
  readonly #queue: ResumeQueue;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;

  constructor(deps: { pool: Pool; queue: ResumeQueue; metrics: AppMetrics; logger: Logger }) {
    this.#pool = deps.pool;
    this.#queue = deps.queue;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
  }

  /**
   * PAUSED → QUEUED and the resume job enqueued (in place of the pause's delayed one); the
   * resume's number (1 for the first), or null when this call resumed nothing (not PAUSED, or
   * another pause than `expectedResumes`).
   */
  async resume(runId: string, options: ResumeOptions): Promise<number | null> {
    const resumed = await resumeRunRow(this.#pool, runId, options);
    if (resumed === null) return null;
    this.#metrics.runResumed(options.cause);
    try {
      // A pause that resumes itself enqueued no delayed job.
      if (options.cause === 'pause') await this.#queue.add(resumed.job);
      else await this.#queue.replace(resumed.job);
    } catch (error) {
      this.#logger.warn(
        { err: error, runId, resumes: resumed.resumes },
        "could not enqueue a resumed run's job; the reconciler enqueues it from its row",
      );
    }
    return resumed.resumes;
  }

  /**
   * RUNNING → PAUSED with its waiting points (RunLifecycle.conclude, for a PAUSED outcome); then
   * resumed at once when a waiting point is answered or due, else the resume job enqueued delayed
   * to the earliest one (none when it waits only for a request or a child without a time). False
   * when the run was not RUNNING (ended, swept): nothing was written.
   */
  async pause(runId: string, steps: readonly StepResult[], pause: RunPause): Promise<boolean> {
    const written = await pauseRun(this.#pool, runId, steps, pause);
    if (written === null) return false;
    this.#metrics.runPaused();
    if (written.resumeNow) {
      await this.resume(runId, { expectedResumes: written.resumes, cause: 'pause' });
      return true;
    }
    if (written.dueInMs !== null) {
      try {
        await this.#queue.add(written.job, 1, { delayMs: Math.max(0, Math.ceil(written.dueInMs)) });
      } catch (error) {
        this.#logger.warn(
          { err: error, runId, resumes: written.resumes },
          "could not enqueue a paused run's delayed resume; the reconciler resumes it once due",
        );
      }
    }
    return true;
  }
}

/**
 * Whether a PAUSED outcome can be recorded: it says where it waits, names a checkpoint of its own
 * run (a resume presigns a GET of that key), and this app records pauses. Else why not, as the
 * error the run ends with.
 */
export function acceptPause(
  runId: string,
  pause: RunPause | undefined,
  pauses: RunPauses | undefined,
): { pause: RunPause; pauses: RunPauses } | SerializedError {
  const refused = (message: string): SerializedError => ({ name: 'PauseRefused', code: 'INTERNAL', message });
  if (pause === undefined) return refused('the run paused without saying where it waits');
  if (!pause.checkpointKey.startsWith(`checkpoints/${runId}/`)) {
    return refused(`the run paused naming a checkpoint that is not its own (${pause.checkpointKey})`);
  }
  if (pauses === undefined) return refused('the run paused, and this app cannot resume runs');
  return { pause, pauses };
}
