import type { DispatchedJob, RunIsolation } from '@flowbox/protocol';

/**
 * How one job is kept apart from others: the worker's RUN_ISOLATION, except that an `isolate`
 * worker follows what the job's flow allows (the app decides it per flow version from the piece
 * registry and TRUSTED_PIECES): `process` for a flow whose piece needs Node, `shared` for one
 * whose pieces that need Node are all trusted. A field read, nothing more, on every job's path.
 */
export function runIsolationFor(worker: RunIsolation, job: Pick<DispatchedJob, 'isolation'>): RunIsolation {
  if (worker !== 'isolate') return worker;
  return job.isolation ?? 'isolate';
}
