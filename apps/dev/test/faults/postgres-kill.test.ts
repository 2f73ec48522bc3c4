// Fault-injection row "Postgres connection killed" (pg_terminate_backend under load):
// every run still reaches exactly one final state. Only this test's own database's sessions
// are terminated (WHERE datname = ...), on the shared Postgres, as its superuser.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queryRows, terminateBackends } from '../../../../packages/local-services/src/index.ts';
import {
  type FaultStack,
  report,
  seconds,
  startFaultStack,
  startLoad,
  tally,
  waitForAllFinal,
  waitUntil,
} from './fault-harness.ts';

const FLOW_TIMEOUT_SECONDS = 10;
/** The run sweeper finalises a run nobody reports FLOW_TIMEOUT_SECONDS + 30 s after its start. */
const SWEEPER_BOUND_MS = (FLOW_TIMEOUT_SECONDS + 30 + 15) * 1000;
const KILLS = 4;

describe("the app's Postgres sessions terminated under load", () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 2,
      appEnv: { FLOW_TIMEOUT_SECONDS: String(FLOW_TIMEOUT_SECONDS) },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('brings every run to exactly one final state', async () => {
    const adminUrl = inject('postgresUrl');
    const terminated: number[] = [];
    // A round right after another may find the pool still reconnecting: only rounds that ended
    // sessions count.
    const effective = () => terminated.filter((count) => count > 0).length;
    let killing = Promise.resolve();
    const load = startLoad({
      url: fault.url,
      flowId: 'benchmark',
      concurrency: 4,
      requestTimeoutMs: 10_000,
      // Every 25 answers, end every session of the app's pool, in the middle of whatever it does.
      onAnswer: (_answer, total) => {
        if (total % 25 !== 0 || effective() >= KILLS) return;
        killing = killing.then(async () => {
          terminated.push(await terminateBackends(adminUrl, fault.databaseName));
        });
      },
    });
    let result: Awaited<ReturnType<typeof load.stop>>;
    try {
      await waitUntil(() => effective() >= KILLS, 60_000, `${KILLS} rounds of pg_terminate_backend`);
      await waitUntil(
        () => load.result.answers.length >= 25 * (KILLS + 1),
        30_000,
        'more runs after the kills',
      );
    } finally {
      result = await load.stop();
      await killing;
    }
    expect(effective()).toBeGreaterThanOrEqual(KILLS);
    // Never a hang: every webhook was answered.
    expect(result.failures).toEqual([]);

    // A webhook whose INSERT was cut off has no run (500, no id); every other one names its run.
    const withRun = result.answers.filter((a) => a.runId !== null);
    for (const answer of result.answers.filter((a) => a.runId === null)) expect(answer.status).toBe(500);
    const runIds = withRun.map((a) => a.runId ?? '');
    const started = performance.now();
    const runs = await waitForAllFinal(fault, runIds, SWEEPER_BOUND_MS);
    const settledMs = performance.now() - started;

    // Exactly one final state: nothing left QUEUED or RUNNING in the database, one row per run,
    // and a successful run holds its steps once (no second attempt appended to it).
    const rows = await queryRows<{ id: string; status: string; steps: Array<{ name: string }> }>(
      fault.databaseUrl,
      "SELECT id, status, steps FROM runs WHERE flow_id = 'benchmark'",
    );
    expect(rows.filter((r) => r.status === 'QUEUED' || r.status === 'RUNNING')).toEqual([]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    for (const runId of runIds)
      expect(rows.find((r) => r.id === runId)?.status).toBe(runs.get(runId)?.status);
    for (const row of rows.filter((r) => r.status === 'SUCCEEDED')) {
      expect(row.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);
    }
    // Read again after everything settled: a final state never changes.
    for (const [runId, run] of runs) expect((await fault.getRun(runId)).status).toBe(run.status);

    const counts = tally(runs.values());
    report('Postgres sessions terminated', {
      rounds: terminated.length,
      sessionsTerminated: terminated,
      webhooks: result.answers.length,
      refusedWithoutRun: result.answers.length - withRun.length,
      runs: runIds.length,
      outcomes: counts,
      lastRunFinalAfterLoadS: seconds(settledMs),
      runsLost: runIds.length - runs.size,
    });
  });
});
