import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import type { BenchReport } from '../src/result-types.ts';

/**
 * Runs the real runner (`pnpm bench` is `node benchmark/src/main.ts`) for one short scenario
 * against a stack it starts itself. Needs `pnpm build` (which `pnpm test` runs first). Checks
 * files and shapes, never a speed figure.
 */
const MAIN = resolve(import.meta.dirname, '..', 'src', 'main.ts');
const RUN_TIMEOUT_MS = 150_000;

const outDirs: string[] = [];
afterEach(async () => {
  await Promise.all(outDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function startRunner(
  args: string[],
  env: Record<string, string> = {},
): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [MAIN, '--skip-build', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return { child, output: () => output, exited };
}

/** Removes the git worktrees a `--baseline` run made under `dir`, and `dir`. */
async function removeWorktrees(dir: string): Promise<void> {
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    await new Promise((done) =>
      spawn('git', ['worktree', 'remove', '--force', join(dir, name)], { stdio: 'ignore' }).once(
        'close',
        done,
      ),
    );
  }
  await rm(dir, { recursive: true, force: true });
  await new Promise((done) => spawn('git', ['worktree', 'prune'], { stdio: 'ignore' }).once('close', done));
}

/** Every live descendant of `root`, from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // Exited meanwhile.
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      visit(child);
    }
  };
  visit(root);
  return out;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

describe('pnpm bench', () => {
  it(
    'runs one quick scenario end to end and writes the JSON, Markdown and SVG results',
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'flowbox-bench-test-'));
      outDirs.push(out);
      const runner = startRunner([
        '--quick',
        '--scenario',
        'warm-1a1w-c1',
        '--repeats',
        '1',
        '--duration',
        '2',
        '--warmup',
        '5',
        '--out',
        out,
      ]);
      const code = await runner.exited;
      expect(code, runner.output()).toBe(0);

      const files = readdirSync(out).sort();
      expect(files).toHaveLength(3);
      const base = files[0]?.replace(/\.json$/, '') ?? '';
      expect(files).toEqual([`${base}.json`, `${base}.md`, `${base}.svg`]);
      expect(base).toMatch(/^\d{4}-\d{2}-\d{2}-.+-custom$/);

      const report = JSON.parse(await readFile(join(out, `${base}.json`), 'utf8')) as BenchReport;
      expect(report.aborted).toBe(false);
      expect(report.scenarios).toHaveLength(1);
      const [result] = report.scenarios;
      expect(result?.status, result?.error).toBe('ok');
      expect(result?.repeats).toHaveLength(1);
      const repeat = result?.repeats[0];
      expect(repeat?.load.ok).toBeGreaterThan(0);
      expect(repeat?.requests).toBeGreaterThan(0);
      expect(repeat?.anatomy?.withTimings).toBeGreaterThan(0);
      expect(repeat?.redis?.commands).toBeGreaterThan(0);
      expect(Object.keys(repeat?.processes ?? {})).toEqual(
        expect.arrayContaining(['app', 'worker', 'engine', 'redis']),
      );

      const md = await readFile(join(out, `${base}.md`), 'utf8');
      expect(md).toContain('## Summary');
      expect(md).toContain('| warm-1a1w-c1 |');
      expect(XMLValidator.validate(await readFile(join(out, `${base}.svg`), 'utf8'))).toBe(true);
      expect(runner.output()).toContain('warm-1a1w-c1');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'runs a simulated fleet against real apps and counts its CPU apart from theirs',
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'flowbox-bench-test-'));
      outDirs.push(out);
      const runner = startRunner([
        '--scenario',
        'sim-2a6w-t20',
        '--repeats',
        '1',
        '--duration',
        '2',
        '--warmup',
        '2',
        '--out',
        out,
      ]);
      const code = await runner.exited;
      expect(code, runner.output()).toBe(0);
      const [json] = readdirSync(out).filter((f) => f.endsWith('.json'));
      const report = JSON.parse(await readFile(join(out, json ?? ''), 'utf8')) as BenchReport;
      const [result] = report.scenarios;
      expect(result?.status, result?.error).toBe('ok');
      expect(result?.scenario).toMatchObject({
        mode: 'sim',
        apps: 2,
        workers: 6,
        serviceMs: 20,
        connections: 6,
      });
      const repeat = result?.repeats[0];
      expect(repeat?.load.ok).toBeGreaterThan(0);
      expect(repeat?.load.non2xx).toBe(0);
      // Every simulated job reported its timings through the real job result.
      expect(repeat?.anatomy?.withTimings).toBeGreaterThan(0);
      const kinds = Object.keys(repeat?.processes ?? {});
      expect(kinds).toEqual(expect.arrayContaining(['app', 'sim', 'redis', 'postgres']));
      expect(kinds).not.toContain('engine');
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'runs a scenario on a baseline commit and on this tree, alternating, and reports their ratio',
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'flowbox-bench-test-'));
      const baselines = await mkdtemp(join(tmpdir(), 'flowbox-baselines-test-'));
      outDirs.push(out);
      const runner = startRunner(
        [
          '--baseline',
          'HEAD',
          '--scenario',
          'warm-1a1w-c1',
          '--repeats',
          '1',
          '--duration',
          '1',
          '--warmup',
          '2',
          '--out',
          out,
        ],
        { FLOWBOX_BASELINES_DIR: baselines },
      );
      try {
        const code = await runner.exited;
        expect(code, runner.output()).toBe(0);
        const [json] = readdirSync(out).filter((f) => f.endsWith('.json'));
        expect(json).toMatch(/-vs-[0-9a-f]{7}\.json$/);
        const report = JSON.parse(await readFile(join(out, json ?? ''), 'utf8')) as BenchReport;
        expect(report.baseline?.ref).toBe('HEAD');
        expect(report.baseline?.scenarios[0]?.status).toBe('ok');
        expect(report.baseline?.scenarios[0]?.repeats[0]?.load.ok).toBeGreaterThan(0);
        expect(report.scenarios[0]?.repeats[0]?.load.ok).toBeGreaterThan(0);
        expect(await readFile(join(out, json?.replace(/json$/, 'md') ?? ''), 'utf8')).toContain(
          '## Against the baseline: HEAD',
        );
      } finally {
        await removeWorktrees(baselines);
      }
    },
    RUN_TIMEOUT_MS * 2,
  );

  it(
    // SIGTERM to the runner alone (as a supervisor sends it) proves that the runner itself stops
    // what it started; a terminal's Ctrl-C also signals the children directly, which only helps.
    'stops everything it started on SIGTERM and still writes what it measured',
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'flowbox-bench-test-'));
      outDirs.push(out);
      const runner = startRunner([
        '--scenario',
        'warm-1a1w-c1',
        '--repeats',
        '1',
        '--duration',
        '60',
        '--warmup',
        '1',
        '--out',
        out,
      ]);
      // The progress prints one line per phase when stderr is not a terminal: wait for the load.
      await new Promise<void>((done, fail) => {
        const check = setInterval(() => {
          if (runner.output().includes('repeat 1/1')) {
            clearInterval(check);
            done();
          }
        }, 50);
        void runner.exited.then((code) => {
          clearInterval(check);
          fail(new Error(`runner exited with ${code} before loading:\n${runner.output()}`));
        });
      });
      const pid = runner.child.pid ?? -1;
      const started = descendants(pid);
      expect(started.length).toBeGreaterThan(3);
      runner.child.kill('SIGTERM');
      expect(await runner.exited, runner.output()).toBe(130);
      expect(started.filter(alive)).toEqual([]);
      const json = readdirSync(out).find((f) => f.endsWith('.json'));
      expect(json).toBeDefined();
      const report = JSON.parse(await readFile(join(out, json ?? ''), 'utf8')) as BenchReport;
      expect(report.aborted).toBe(true);
      expect(existsSync(join(out, (json ?? '').replace(/json$/, 'md')))).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );
});
