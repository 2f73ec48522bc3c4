import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/fixtures.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository, type FlowsRepository } from '../src/flows/flows-repository.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import { createSchedulesRepository, type TickInput } from '../src/schedules/schedules-repository.ts';
import { TEST_TRIGGER } from './run-fixtures.ts';

const every = (seconds: number): FlowDefinition => ({
  trigger: { name: 'trigger', piece: 'schedule', trigger: 'every', input: { seconds } },
  steps: [{ type: 'code', name: 'tick', code: 'return inputs;', input: {} }],
});
const BUNDLE = (id: string) => ({
  bundle: { key: `bundles/${id}.json`, sha256: 'a'.repeat(64), sizeBytes: 1, pieces: [] },
  connections: [],
});

// Two pools stand for two apps on one database: what one publishes, the other reads as a change.
describe('schedule changes and batched ticks', () => {
  let url: string;
  let appA: Pool;
  let appB: Pool;
  let flows: FlowsRepository;
  const statements: string[] = [];

  beforeAll(async () => {
    url = await createTestDatabase();
    appA = createPool(url, 2);
    appB = createPool(url, 2);
    await migrate(appA, createLogger({ name: 'test', level: 'silent' }));
    flows = createFlowsRepository(appA);
    // Counts app B's statements: a read between changes must be one, whatever the number of flows.
    const query = appB.query.bind(appB);
    appB.query = ((text: unknown, ...rest: unknown[]) => {
      statements.push(typeof text === 'string' ? text : 'config');
      return (query as (...args: unknown[]) => unknown)(text, ...rest);
    }) as typeof appB.query;
  });
  afterAll(async () => {
    await appA?.end();
    await appB?.end();
  });

  const publish = async (id: string, definition: FlowDefinition) => {
    const existing = await flows.getFlow(id);
    return existing === null
      ? flows.createFlow({ id, name: id, definition }, async (v) => BUNDLE(v.id))
      : flows.addVersion(id, definition, async (v) => BUNDLE(v.id));
  };

  it("reads another app's change without reading every flow again", async () => {
    for (let i = 0; i < 50; i++) await publish(`s${i}`, every(60));
    await publish('hook', BENCHMARK_FLOW);
    const schedules = createSchedulesRepository(appB, { maxQueued: 0 });

    const first = await schedules.listChanged(-1, []);
    expect(first.changes.map((c) => c.flowId).sort()).toEqual(
      Array.from({ length: 50 }, (_, i) => `s${i}`).sort(),
    );
    statements.length = 0;
    const quiet = await schedules.listChanged(first.seq, []);
    expect(quiet).toEqual({ changes: [], seq: first.seq });
    expect(statements).toHaveLength(1);

    // App A publishes a new schedule, another version of one, disables one, deletes one.
    await publish('s-new', every(120));
    const v2 = await publish('s1', every(300));
    await flows.update('s2', { enabled: false });
    await flows.delete('s3');
    // A change of name alone changes nothing that ticks: not read again.
    await flows.update('s4', { name: 'renamed' });

    const changed = await schedules.listChanged(quiet.seq, []);
    const byFlow = new Map(changed.changes.map((c) => [c.flowId, c.schedule]));
    expect([...byFlow.keys()].sort()).toEqual(['s-new', 's1', 's2', 's3']);
    expect(byFlow.get('s-new')).toMatchObject({ flowId: 's-new', trigger: { input: { seconds: 120 } } });
    expect(byFlow.get('s1')).toMatchObject({ flowVersionId: v2?.id, trigger: { input: { seconds: 300 } } });
    expect(byFlow.get('s2')).toBeNull();
    expect(byFlow.get('s3')).toBeNull();
    expect(changed.seq).toBeGreaterThan(quiet.seq);
    expect(await schedules.listChanged(changed.seq, [])).toEqual({ changes: [], seq: changed.seq });
    // A flow asked for again by id is read whatever its number.
    expect((await schedules.listChanged(changed.seq, ['s5'])).changes.map((c) => c.flowId)).toEqual(['s5']);
  });

  it('records a batch of fired, skipped, missed, duplicate and stale ticks in one statement', async () => {
    for (const id of ['b-fire', 'b-skip', 'b-miss', 'b-dup', 'b-stale']) await publish(id, every(60));
    const schedules = createSchedulesRepository(appB, { maxQueued: 0 });
    const at = new Date('2026-11-29T10:00:00Z');
    const tick = (flowId: string, extra: Partial<TickInput> = {}): TickInput => ({
      runId: randomUUID(),
      flowId,
      flowVersionId: `${flowId}-v1`,
      scheduledAt: at,
      trigger: TEST_TRIGGER,
      missed: 0,
      overlap: 'allow',
      passOver: false,
      ...extra,
    });
    // b-skip has a scheduled run still QUEUED; b-dup's tick was recorded by another app.
    const [earlier] = await schedules.fireMany([
      tick('b-skip', { scheduledAt: new Date('2026-11-29T09:59:00Z') }),
    ]);
    expect(earlier).toEqual({ outcome: 'fired', rank: 1 });
    expect(await schedules.fireMany([tick('b-dup')])).toEqual([{ outcome: 'fired', rank: 1 }]);
    await flows.update('b-stale', { enabled: false });

    const batch = [
      tick('b-stale'),
      tick('b-fire'),
      tick('b-dup'),
      tick('b-skip', { overlap: 'skip' }),
      tick('b-miss', { passOver: true, missed: 4 }),
    ];
    statements.length = 0;
    expect(await schedules.fireMany(batch)).toEqual([
      { outcome: 'stale' },
      { outcome: 'fired', rank: 1 },
      { outcome: 'duplicate' },
      { outcome: 'skipped', reason: 'overlap' },
      { outcome: 'missed' },
    ]);
    expect(statements).toHaveLength(1);

    const { rows: ticks } = await appA.query<{
      flow_id: string;
      outcome: string;
      missed: number;
      run_id: string | null;
    }>(
      `SELECT flow_id, outcome, missed, run_id FROM schedule_ticks
       WHERE scheduled_at = $1 AND flow_id LIKE 'b-%' ORDER BY flow_id`,
      [at],
    );
    expect(ticks.map((t) => [t.flow_id, t.outcome, t.missed])).toEqual([
      ['b-dup', 'fired', 0],
      ['b-fire', 'fired', 0],
      ['b-miss', 'missed', 4],
      ['b-skip', 'skipped', 0],
    ]);
    // Only the fired tick of this batch made a run: b-dup's is the earlier app's.
    const { rows: runs } = await appA.query<{ id: string; status: string; source: string; rank: number }>(
      'SELECT id, status, source, rank FROM runs WHERE id = ANY($1::uuid[])',
      [batch.map((t) => t.runId)],
    );
    expect(runs).toEqual([{ id: batch[1]?.runId, status: 'QUEUED', source: 'schedule', rank: 1 }]);
  });

  it("ranks a batch's runs behind each flow's queued runs, and skips a flow at its queue bound", async () => {
    for (const id of ['q-one', 'q-full']) await publish(id, every(60));
    const schedules = createSchedulesRepository(appB, { maxQueued: 2 });
    const tick = (flowId: string, minute: number): TickInput => ({
      runId: randomUUID(),
      flowId,
      flowVersionId: `${flowId}-v1`,
      scheduledAt: new Date(Date.UTC(2026, 10, 29, 11, minute)),
      trigger: TEST_TRIGGER,
      missed: 0,
      overlap: 'allow',
      passOver: false,
    });
    expect(await schedules.fireMany([tick('q-full', 0), tick('q-one', 0)])).toEqual([
      { outcome: 'fired', rank: 1 },
      { outcome: 'fired', rank: 1 },
    ]);
    expect(await schedules.fireMany([tick('q-full', 1)])).toEqual([{ outcome: 'fired', rank: 2 }]);
    expect(await schedules.fireMany([tick('q-one', 1), tick('q-full', 2)])).toEqual([
      { outcome: 'fired', rank: 2 },
      { outcome: 'skipped', reason: 'queue-full' },
    ]);
  });
});
