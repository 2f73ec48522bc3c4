import { configDefaults, defineConfig } from 'vitest/config';
import { BESIDE_CODE, BROWSER, COMPOSE, FAULTS, NAMED_INTEGRATION, TEST_FOLDERS } from './test/tiers.ts';

/**
 * The tests in five tiers (vitest projects), chosen by where a test file lives and how it is
 * named (test/tiers.ts), so a new file lands in its tier without a list to edit (docs/testing.md):
 * - unit: `*.test.ts` beside the code (a package's `src/`, and `scripts/`): no server, no build.
 * - integration: a package's `test/` folder, and `*.int.test.ts` anywhere; real stores.
 * - faults: `test/faults/` (fault injection on a real stack).
 * - browser: `*.browser.test.ts` (headless Chromium on a real stack).
 * - compose: `docker/test/` (the compose file, the Dockerfile and the Kubernetes manifests).
 * `pnpm test` runs every project, `pnpm test:<project>` one of them.
 */
/** One real Postgres, Redis and versitygw, shared by every project of a run that lists it. */
const STORES = './test/global-setup.ts';

export default defineConfig({
  test: {
    // Workers fork engines and spawn servers; child processes need a real process, not a thread.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // The JSON report is always written so CI can count results and time files (.ci/run reads it).
    reporters: ['default', 'json', './test/file-times-reporter.ts'],
    outputFile: { json: '.data/vitest-report.json' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: BESIDE_CODE,
          exclude: [...configDefaults.exclude, NAMED_INTEGRATION, BROWSER],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [...TEST_FOLDERS, NAMED_INTEGRATION],
          exclude: [...configDefaults.exclude, FAULTS, BROWSER, COMPOSE],
          globalSetup: [STORES],
        },
      },
      {
        extends: true,
        test: {
          name: 'faults',
          include: [FAULTS],
          exclude: [...configDefaults.exclude, BROWSER],
          globalSetup: [STORES],
        },
      },
      {
        extends: true,
        test: { name: 'browser', include: [BROWSER], globalSetup: [STORES] },
      },
      {
        extends: true,
        test: { name: 'compose', include: [COMPOSE], exclude: [...configDefaults.exclude, BROWSER] },
      },
    ],
  },
});
