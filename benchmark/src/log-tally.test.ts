import { describe, expect, it } from 'vitest';
import { sampleReport } from '../test/sample-report.ts';
import { createLogTally, logLinesBetween, logLinesSection } from './log-tally.ts';

describe('log tally', () => {
  it('counts warnings and errors by process kind and message, between two snapshots', () => {
    const tally = createLogTally();
    tally.record('worker-0', { level: 40, msg: 'before the window' });
    tally.record('app-0', { level: 30, msg: 'info is not counted' });
    tally.record('redis-server', null);
    const before = tally.snapshot();
    tally.record('worker-0', { level: 40, msg: 'the app answered the poll with an error' });
    tally.record('worker-3', { level: 40, msg: 'the app answered the poll with an error' });
    tally.record('app-0', { level: 50, msg: 'could not record a job result' });
    tally.record('app-1', { level: 60 });
    for (const id of ['9c81ce69-4402-40e1-865d-f5d8ef0a0efe', '54e2920b-6188-4e0e-ac74-e9bd89d5a76f']) {
      tally.record('app-0', { level: 40, msg: `run ${id} has already ended; not running it again` });
    }
    expect(logLinesBetween(before, tally.snapshot())).toEqual({
      warn: 4,
      error: 2,
      messages: [
        { level: 'warn', source: 'app', msg: 'run <id> has already ended; not running it again', count: 2 },
        { level: 'warn', source: 'worker', msg: 'the app answered the poll with an error', count: 2 },
        { level: 'error', source: 'app', msg: '(no message)', count: 1 },
        { level: 'error', source: 'app', msg: 'could not record a job result', count: 1 },
      ],
    });
    // A snapshot is a copy: later lines do not change it.
    const frozen = tally.snapshot();
    tally.record('worker-0', { level: 40, msg: 'before the window' });
    expect(logLinesBetween(frozen, frozen)).toEqual({ warn: 0, error: 0, messages: [] });
  });

  it('lists each repeat that printed something, for both sides of a baseline run', () => {
    const report = sampleReport();
    const [scenario] = report.scenarios;
    if (scenario === undefined) throw new Error('the sample report has a scenario');
    expect(logLinesSection([{ label: '', scenarios: report.scenarios }])).toContain(
      'None: no process printed a warning or an error in any measured window.',
    );
    const noisy = {
      ...scenario,
      repeats: scenario.repeats.map((repeat, i) =>
        i === 0
          ? {
              ...repeat,
              logLines: {
                warn: 1,
                error: 0,
                messages: [{ level: 'warn' as const, source: 'worker', msg: 'poll refused', count: 1 }],
              },
            }
          : repeat,
      ),
    };
    const section = logLinesSection([
      { label: '', scenarios: [scenario] },
      { label: ' (baseline)', scenarios: [noisy] },
    ]);
    expect(section).toContain(
      `- ${scenario.scenario.name} (baseline), repeat 1: 1 × worker warn "poll refused"`,
    );
    expect(section.filter((line) => line.startsWith('- '))).toHaveLength(1);
  });
});
