import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from './args.ts';

const paths = { cwd: '/repo', defaultOutDir: '/repo/benchmark/results' };
const parse = (argv: string[], env: { FLOWBOX_API_KEY?: string } = {}) => parseBenchArgs(argv, env, paths);

describe('parseBenchArgs', () => {
  it('gives the standard suite defaults', () => {
    const options = parse([]);
    expect(options).toMatchObject({
      quick: false,
      scenarios: null,
      durationS: 10,
      repeats: 3,
      warmupPerWorker: 50,
      connections: undefined,
      target: undefined,
      outDir: '/repo/benchmark/results',
      build: true,
      help: false,
    });
  });

  it('reads --latency and refuses it with --target', () => {
    expect(parse([]).latency).toBeUndefined();
    expect(parse(['--latency', 's3=30']).latency).toEqual({ s3: 30, pg: 1, redis: 0.5 });
    expect(() => parse(['--latency', 's3=1', '--target', 'http://127.0.0.1:1'])).toThrow(/deployment's own/);
  });

  it('takes a profile directory for --cpu-prof, relative to the working directory, and refuses it with --target', () => {
    expect(parse([]).cpuProfDir).toBeUndefined();
    expect(parse(['--cpu-prof', 'prof']).cpuProfDir).toBe('/repo/prof');
    expect(() => parse(['--target', 'http://10.1.2.3:3000', '--cpu-prof', 'prof'])).toThrow(/--cpu-prof/);
  });

  it('shortens durations and warm-up for --quick', () => {
    expect(parse(['--quick'])).toMatchObject({ quick: true, durationS: 2, repeats: 3, warmupPerWorker: 10 });
  });

  it('reads repeatable scenarios and numeric options', () => {
    const options = parse([
      '--scenario',
      'warm-1a2w-c2',
      '--scenario',
      'cold-1a1w-c4',
      '--duration',
      '2.5',
      '--repeats',
      '5',
      '--connections',
      '8',
      '--out',
      'tmp/out',
      '--skip-build',
    ]);
    expect(options.scenarios?.map((s) => s.name)).toEqual(['warm-1a2w-c2', 'cold-1a1w-c4']);
    expect(options).toMatchObject({
      durationS: 2.5,
      repeats: 5,
      connections: 8,
      outDir: '/repo/tmp/out',
      build: false,
    });
  });

  it('rejects bad numbers with the flag in the message', () => {
    expect(() => parse(['--repeats', '0'])).toThrow(/--repeats/);
    expect(() => parse(['--repeats', '1.5'])).toThrow(/whole number/);
    expect(() => parse(['--duration', 'soon'])).toThrow(/--duration/);
    expect(() => parse(['--connections', ''])).toThrow(/--connections/);
  });

  it('rejects unknown options and scenarios', () => {
    expect(() => parse(['--fast'])).toThrow();
    expect(() => parse(['--scenario', 'hot-1a1w-c1'])).toThrow(/unknown scenario/);
  });

  it('takes the API key from the flag, then from FLOWBOX_API_KEY', () => {
    const target = ['--target', 'http://flowbox-app:3000/'];
    expect(parse(target, { FLOWBOX_API_KEY: 'from-env' })).toMatchObject({
      target: 'http://flowbox-app:3000',
      apiKey: 'from-env',
    });
    expect(parse([...target, '--api-key', 'flag'], { FLOWBOX_API_KEY: 'from-env' }).apiKey).toBe('flag');
    expect(parse(target).apiKey).toBeUndefined();
  });

  it('keeps target scenarios and local scenarios apart', () => {
    expect(() => parse(['--scenario', 'target-1a4w-c4'])).toThrow(/needs --target/);
    expect(() => parse(['--target', 'http://x', '--scenario', 'warm-1a1w-c1'])).toThrow(/deployment decides/);
    expect(parse(['--target', 'http://x', '--scenario', 'target-1a4w-c16']).scenarios?.[0]?.workers).toBe(4);
  });

  it('accepts only http(s) targets', () => {
    expect(() => parse(['--target', 'ftp://x'])).toThrow(/http/);
    expect(() => parse(['--target', 'not a url'])).toThrow(/not a URL/);
  });
});

describe('--baseline', () => {
  it('takes a git ref and refuses it with --target, --cpu-prof or a ref that looks like a flag', () => {
    expect(parse([]).baseline).toBeUndefined();
    expect(parse(['--baseline', '55a97c9']).baseline).toBe('55a97c9');
    expect(parse(['--baseline', 'origin/main~2']).baseline).toBe('origin/main~2');
    expect(() => parse(['--baseline', 'main', '--target', 'http://127.0.0.1:3000'])).toThrow(/--target/);
    expect(() => parse(['--baseline', 'main', '--cpu-prof', 'p'])).toThrow(/--cpu-prof/);
    expect(() => parse(['--baseline=--help'])).toThrow(/not a git ref/);
    expect(() => parse(['--baseline', 'a b'])).toThrow(/not a git ref/);
  });
});

describe('--tree-execution-mode and --tree-hops', () => {
  it("set this tree's side of a baseline run only", () => {
    expect(parse([]).treeSide).toEqual({});
    expect(parse(['--baseline', 'HEAD', '--tree-execution-mode', 'SANDBOXED']).treeSide).toEqual({
      executionMode: 'SANDBOXED',
    });
    expect(parse(['--baseline', 'HEAD', '--tree-hops']).treeSide).toEqual({ traced: true });
    // The baseline side keeps --execution-mode.
    const both = parse([
      '--baseline',
      'HEAD',
      '--execution-mode',
      'UNSANDBOXED',
      '--tree-execution-mode',
      'SANDBOXED',
    ]);
    expect([both.executionMode, both.treeSide.executionMode]).toEqual(['UNSANDBOXED', 'SANDBOXED']);
  });

  it('refuse to run without a baseline, an unknown mode, and --tree-hops with --hops', () => {
    expect(() => parse(['--tree-execution-mode', 'SANDBOXED'])).toThrow(/name the baseline/);
    expect(() => parse(['--tree-hops'])).toThrow(/name the baseline/);
    expect(() => parse(['--baseline', 'HEAD', '--tree-execution-mode', 'FAST'])).toThrow(
      /--tree-execution-mode must be one of/,
    );
    expect(() => parse(['--baseline', 'HEAD', '--tree-hops', '--hops'])).toThrow(/--hops traces both/);
  });
});
