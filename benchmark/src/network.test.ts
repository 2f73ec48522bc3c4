import { describe, expect, it } from 'vitest';
import { DEFAULT_LATENCY, describeLatency, parseLatency, roundTripSplit } from './network.ts';
import { onNetwork, parseScenarioName } from './scenarios.ts';

describe('network latency', () => {
  it('reads one-way delays per store, keeping the defaults for the stores left out', () => {
    expect(parseLatency('s3=20,pg=1,redis=0.5')).toEqual({ s3: 20, pg: 1, redis: 0.5 });
    expect(parseLatency('s3=50')).toEqual({ ...DEFAULT_LATENCY, s3: 50 });
    expect(() => parseLatency('mysql=1')).toThrow(/unknown store "mysql"/);
    expect(() => parseLatency('pg=-1')).toThrow(/pg must be 0..1000 ms one way/);
    expect(() => parseLatency('pg=')).toThrow(/pg must be/);
  });

  it('splits a one-way delay into whole milliseconds per direction that add up to the round trip', () => {
    expect(roundTripSplit(20)).toEqual({ upstreamMs: 20, downstreamMs: 20 });
    expect(roundTripSplit(0.5)).toEqual({ upstreamMs: 0, downstreamMs: 1 });
    expect(roundTripSplit(1.5)).toEqual({ upstreamMs: 1, downstreamMs: 2 });
    expect(roundTripSplit(0)).toEqual({ upstreamMs: 0, downstreamMs: 0 });
    expect(describeLatency(DEFAULT_LATENCY)).toContain('Redis 0.5 ms one way (round trip 1 ms)');
  });

  it('names -net scenarios and runs every scenario on the network when --latency names none', () => {
    const net = parseScenarioName('warm-1a1w-c1-net');
    expect(net).toMatchObject({ name: 'warm-1a1w-c1-net', mode: 'warm', network: true });
    expect(parseScenarioName('cold-prewarm-1a1w-c4-r5-net').name).toBe('cold-prewarm-1a1w-c4-r5-net');
    expect(() => parseScenarioName('target-1a1w-c1-net')).toThrow(/-net is for local stacks/);

    const loopback = parseScenarioName('warm-1a1w-c1');
    expect(onNetwork([loopback], false)).toEqual([loopback]);
    expect(onNetwork([loopback], true).map((s) => s.name)).toEqual(['warm-1a1w-c1-net']);
    // Named side by side, each keeps its own network: the loopback twin stays on loopback.
    expect(onNetwork([loopback, net], true).map((s) => s.name)).toEqual(['warm-1a1w-c1', 'warm-1a1w-c1-net']);
  });
});
