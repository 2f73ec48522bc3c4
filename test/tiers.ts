/**
 * Where each test tier's files live and how they are named (docs/testing.md). vitest.config.ts
 * builds its projects from these globs, and scripts/test-tiers.test.ts checks the unit tier's
 * files against them, so a new file lands in its tier without a list to edit.
 */

/** Tests beside the code: the unit tier, unless a name below claims them. */
export const BESIDE_CODE = [
  'apps/*/src/**/*.test.ts',
  'packages/*/src/**/*.test.ts',
  'benchmark/src/**/*.test.ts',
  'scripts/**/*.test.ts',
];
/** A package's own test folder: the integration tier. */
export const TEST_FOLDERS = [
  'apps/*/test/**/*.test.ts',
  'packages/*/test/**/*.test.ts',
  'benchmark/test/**/*.test.ts',
];
/** An integration test beside the code it tests. */
export const NAMED_INTEGRATION = '**/*.int.test.ts';
export const FAULTS = 'apps/*/test/faults/**/*.test.ts';
export const BROWSER = '**/*.browser.test.ts';
export const COMPOSE = 'docker/test/**/*.test.ts';
