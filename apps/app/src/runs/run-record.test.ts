import { describe, expect, it } from 'vitest';
import { toRunRecord } from './run-record.ts';

const ID = '5b7e8c1e-3f7a-4d5e-9a51-0c2b6f4d9e10';

/** A finished run's row as pg gives it: JSON columns parsed, timestamps as Dates. */
const row = () => ({
  id: ID,
  flow_id: 'benchmark',
  flow_version_id: 'benchmark-v1',
  status: 'SUCCEEDED',
  sync: true,
  steps: [
    {
      name: 'trigger',
      kind: 'webhook/catch_webhook',
      status: 'SUCCEEDED',
      input: {},
      output: { a: 1 },
      startedAt: '2026-11-25T10:00:00.000Z',
      durationMs: 0.4,
    },
  ],
  error: null,
  log_key: `runs/${ID}.json`,
  log_error: null,
  timings: { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 3, logPersistMs: 1, workerBusyMs: 5, totalMs: 7 },
  provisioning: {
    bundle: 'hit',
    pieceHits: 2,
    pieceMisses: 0,
    engine: { pid: 1, jobsServed: 3, preBooted: true },
  },
  isolation: 'isolate',
  worker_id: 'worker-1',
  attempts: 1,
  created_at: new Date('2026-11-25T10:00:00.000Z'),
  started_at: new Date('2026-11-25T10:00:00.001Z'),
  finished_at: new Date('2026-11-25T10:00:00.008Z'),
  rerun_of: null,
  source: 'webhook',
});

describe('run rows', () => {
  it('turns a well-formed row into its record', () => {
    const record = toRunRecord(row());
    expect(record).toMatchObject({
      id: ID,
      flowId: 'benchmark',
      status: 'SUCCEEDED',
      logKey: `runs/${ID}.json`,
      timings: { totalMs: 7 },
      isolation: 'isolate',
      workerId: 'worker-1',
    });
    expect(record.steps.map((step) => step.name)).toEqual(['trigger']);
  });

  it('refuses a malformed row with an error naming the run and the column', () => {
    const malformed: Array<[string, Record<string, unknown>, RegExp]> = [
      ['steps not a list', { steps: { trigger: {} } }, /steps/],
      [
        'a step without its status',
        { steps: [{ ...row().steps[0], status: undefined }] },
        /steps\.0\.status/,
      ],
      [
        'an error code the catalog does not know',
        { error: { name: 'E', code: 'NOPE', message: 'x' } },
        /error\.code/,
      ],
      ['timings missing a part', { timings: { queueMs: 1, totalMs: 2 } }, /timings\.provisionMs/],
      ['provisioning of another shape', { provisioning: { bundle: 'maybe' } }, /provisioning\.bundle/],
      ['a status Postgres would refuse', { status: 'DONE' }, /status/],
      ['an isolation no worker reports', { isolation: 'vm' }, /isolation/],
      ['a timestamp that is not a Date', { created_at: '2026-11-25' }, /created_at/],
    ];
    for (const [why, change, column] of malformed) {
      let thrown: unknown;
      try {
        toRunRecord({ ...row(), ...change });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, why).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining(`run ${ID}:`) });
      expect((thrown as Error).message, why).toMatch(column);
    }
  });

  it('says so when the row has no id either', () => {
    expect(() => toRunRecord({ ...row(), id: undefined })).toThrow(
      /run \(no id\): its row is malformed: id:/,
    );
    expect(() => toRunRecord(null)).toThrow(/run \(no id\)/);
  });
});
