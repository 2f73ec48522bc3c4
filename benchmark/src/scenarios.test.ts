import {
  BENCHMARK_DELAY_FLOW_ID,
  BENCHMARK_FLOW_ID,
  BENCHMARK_LOOP_FLOW_ID,
  BENCHMARK_NODELAY_FLOW_ID,
  BENCHMARK_PAUSE_FLOW_ID,
  BENCHMARK_ROUTER_FLOW_ID,
} from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import {
  flowIdFor,
  parseScenarioName,
  quickSuite,
  standardSuite,
  targetSuite,
  withConnections,
  workerEnvFor,
} from './scenarios.ts';

describe('scenarios', () => {
  it('parses any shape from its name and names it back', () => {
    expect(parseScenarioName('cold-prewarm-2a4w-c16')).toEqual({
      name: 'cold-prewarm-2a4w-c16',
      mode: 'cold-prewarm',
      apps: 2,
      workers: 4,
      connections: 16,
    });
    expect(() => parseScenarioName('warm-0a1w-c1')).toThrow(/between 1/);
    expect(() => parseScenarioName('warm-1a1w')).toThrow(/expected/);
    expect(parseScenarioName('cold-prewarm-1a1w-c4-r5')).toEqual({
      name: 'cold-prewarm-1a1w-c4-r5',
      mode: 'cold-prewarm',
      apps: 1,
      workers: 1,
      connections: 4,
      rate: 5,
    });
    expect(() => parseScenarioName('warm-1a1w-c1-r0')).toThrow(/rate must be between 1/);
  });

  it('names the flow scenarios, which run warm workers against their own seeded flow', () => {
    expect(parseScenarioName('loop100-1a1w-c1')).toMatchObject({
      mode: 'loop100',
      workers: 1,
      connections: 1,
    });
    expect(parseScenarioName('router-1a1w-c1')).toMatchObject({ mode: 'router', workers: 1, connections: 1 });
    expect(workerEnvFor('loop100')).toEqual(workerEnvFor('warm'));
    expect(workerEnvFor('router')).toEqual(workerEnvFor('warm'));
    expect([flowIdFor('loop100'), flowIdFor('router'), flowIdFor('warm')]).toEqual([
      BENCHMARK_LOOP_FLOW_ID,
      BENCHMARK_ROUTER_FLOW_ID,
      BENCHMARK_FLOW_ID,
    ]);
    expect(standardSuite().map((s) => s.name)).toEqual(
      expect.arrayContaining(['loop100-1a1w-c1', 'router-1a1w-c1']),
    );
  });

  it('covers every mode, 1/2/4 workers, 1 and 2 apps and saturation in the standard suite', () => {
    const suite = standardSuite();
    const names = suite.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const mode of ['warm', 'cold-prewarm', 'cold'] as const) {
      const ofMode = suite.filter((s) => s.mode === mode);
      expect(new Set(ofMode.map((s) => s.workers))).toEqual(new Set([1, 2, 4]));
      expect(ofMode.some((s) => s.connections > s.workers)).toBe(true);
    }
    expect(suite.some((s) => s.apps === 2)).toBe(true);
    expect(suite.filter((s) => s.connections <= s.workers).every((s) => s.connections === s.workers)).toBe(
      true,
    );
  });

  it('keeps the quick suite small', () => {
    expect(quickSuite().length).toBeLessThanOrEqual(4);
    expect(new Set(quickSuite().map((s) => s.mode))).toEqual(new Set(['warm', 'cold-prewarm', 'cold']));
  });

  it('overrides connections and drops the duplicates that makes', () => {
    const list = withConnections(targetSuite(3), 5);
    expect(list.map((s) => s.name)).toEqual(['target-1a3w-c5']);
    expect(withConnections(targetSuite(3), undefined).map((s) => s.connections)).toEqual([3, 12]);
  });

  it('maps modes to the worker environment', () => {
    expect(workerEnvFor('warm')).toEqual({ REUSE_SANDBOX: 'true' });
    expect(workerEnvFor('cold-prewarm')).toEqual({ REUSE_SANDBOX: 'false', PREWARM: 'true' });
    expect(workerEnvFor('cold')).toEqual({ REUSE_SANDBOX: 'false', PREWARM: 'false' });
    expect(workerEnvFor('isolate')).toEqual({ RUN_ISOLATION: 'isolate' });
    expect(parseScenarioName('isolate-1a1w-c1')).toMatchObject({
      mode: 'isolate',
      apps: 1,
      workers: 1,
      connections: 1,
    });
    expect(workerEnvFor('target')).toEqual({});
  });
});

describe('durable-run scenarios', () => {
  it('reads pause<n>-<apps>a<workers>w as n requests, one per connection, within one second', () => {
    expect(parseScenarioName('pause500-1a1w')).toEqual({
      name: 'pause500-1a1w',
      mode: 'pause',
      apps: 1,
      workers: 1,
      connections: 500,
      rate: 500,
    });
    expect(() => parseScenarioName('pause5000-1a1w')).toThrow(/requests must be between 1 and/);
    expect(() => parseScenarioName('pause500-1a0w')).toThrow(/between 1/);
    expect(withConnections([parseScenarioName('pause500-1a1w')], 50)).toEqual([
      parseScenarioName('pause50-1a1w'),
    ]);
  });

  it('runs the delay pair on warm workers against their own flows, in the standard suite', () => {
    expect(parseScenarioName('delay-1a1w-c64-r20')).toMatchObject({
      mode: 'delay',
      connections: 64,
      rate: 20,
    });
    expect(parseScenarioName('nodelay-1a1w-c64-r20').name).toBe('nodelay-1a1w-c64-r20');
    for (const mode of ['pause', 'delay', 'nodelay'] as const)
      expect(workerEnvFor(mode)).toEqual(workerEnvFor('warm'));
    expect([flowIdFor('pause'), flowIdFor('delay'), flowIdFor('nodelay')]).toEqual([
      BENCHMARK_PAUSE_FLOW_ID,
      BENCHMARK_DELAY_FLOW_ID,
      BENCHMARK_NODELAY_FLOW_ID,
    ]);
    expect(standardSuite().map((s) => s.name)).toEqual(
      expect.arrayContaining(['pause500-1a1w', 'delay-1a1w-c64-r20', 'nodelay-1a1w-c64-r20']),
    );
  });
});

describe('simulated fleet scenarios', () => {
  it('reads sim-<apps>a<workers>w-t<ms>, with connections = workers unless -c follows', () => {
    expect(parseScenarioName('sim-16a160w-t200')).toEqual({
      name: 'sim-16a160w-t200',
      mode: 'sim',
      apps: 16,
      workers: 160,
      connections: 160,
      serviceMs: 200,
    });
    expect(parseScenarioName('sim-1a1000w-t200-c10')).toMatchObject({ workers: 1000, connections: 10 });
    expect(parseScenarioName('sim-1a1000w-t200-c10').name).toBe('sim-1a1000w-t200-c10');
    expect(() => parseScenarioName('sim-1a3000w-t200')).toThrow(/simulated workers must be between/);
    expect(() => parseScenarioName('sim-1a10w-t70000')).toThrow(/service time/);
    expect(() => parseScenarioName('sim-1a10w')).toThrow(/sim-<apps>a<workers>w-t<ms>/);
  });
});
