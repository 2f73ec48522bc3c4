import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's time in a run; .ci/run prints the slowest ten. */
export interface FileTime {
  project: string;
  file: string;
  state: string;
  /** Import and collection, setup files, and the tests with their hooks (beforeAll included). */
  totalMs: number;
  collectMs: number;
  runMs: number;
}

const ROOT = resolve(import.meta.dirname, '..');
/** Beside vitest's JSON report (vitest.config.ts). */
export const FILE_TIMES = resolve(ROOT, '.data/vitest-file-times.json');

/**
 * Writes every test file's time, slowest first, to .data/vitest-file-times.json. vitest's JSON
 * report times a file from its first test's start to its last test's end, which leaves out the
 * imports and a `beforeAll` that starts a stack: the part that makes an integration file slow.
 * It also records how many errors were thrown outside any test, which the JSON report leaves out.
 */
export default class FileTimesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const files = testModules.map((module): FileTime => {
      const d = module.diagnostic();
      const collectMs = d.collectDuration + d.prepareDuration + d.environmentSetupDuration;
      return {
        project: module.project.name,
        file: relative(ROOT, module.moduleId),
        state: module.state(),
        totalMs: Math.round(collectMs + d.setupDuration + d.duration),
        collectMs: Math.round(collectMs),
        runMs: Math.round(d.duration),
      };
    });
    files.sort((a, b) => b.totalMs - a.totalMs);
    mkdirSync(dirname(FILE_TIMES), { recursive: true });
    // An error outside any test fails the run; .ci/run counts each as a failure.
    const unhandled = unhandledErrors.length;
    writeFileSync(FILE_TIMES, `${JSON.stringify({ unhandledErrors: unhandled, files }, null, 2)}\n`);
  }
}
