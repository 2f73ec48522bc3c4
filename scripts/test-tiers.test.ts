import { globSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BESIDE_CODE, BROWSER, NAMED_INTEGRATION } from '../test/tiers.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** This file quotes the patterns it looks for. */
const SELF = relative(ROOT, import.meta.filename);

/** What puts a test file out of the unit tier (docs/testing.md), and how to see it in its text. */
const NEEDS: ReadonlyArray<[RegExp, string]> = [
  [/from '[^']*test\/fixtures\.ts'/, 'the stores (test/fixtures.ts)'],
  [/import \{[^}]*\binject\b[^}]*\} from 'vitest'/, "the stores (vitest's inject)"],
  [/from '[^']*harness\.ts'/, 'a harness that starts engines or apps'],
  [/^import (?!type )[^;]*from '@flowbox\/local-services'/m, 'a server from @flowbox/local-services'],
  [/\b(unpackBuiltPieces|builtPieceArchives|prepareEngineArtifacts)\b/, "the build's output"],
];

function unitTierFiles(): string[] {
  return globSync(BESIDE_CODE, {
    cwd: ROOT,
    exclude: ['**/node_modules/**', '**/dist/**', NAMED_INTEGRATION, BROWSER],
  }).sort();
}

describe('the unit tier', () => {
  it('holds test files, found by the same globs as vitest.config.ts', () => {
    const files = unitTierFiles();
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((file) => file.endsWith('.test.ts') && !file.endsWith('.int.test.ts'))).toBe(true);
  });

  it('has no file that needs a store, a server, an app or the build', () => {
    const others = unitTierFiles().filter((file) => file !== SELF);
    const misplaced = others.flatMap((file) => {
      const text = readFileSync(resolve(ROOT, file), 'utf8');
      return NEEDS.filter(([pattern]) => pattern.test(text)).map(
        ([, need]) => `${file} needs ${need}: name it *.int.test.ts or move it to its package's test/ folder`,
      );
    });
    expect(misplaced).toEqual([]);
  });

  it('sees a file that uses the fixtures or a harness', () => {
    const [fixtures, inject, harness, server, build] = NEEDS.map(([pattern]) => pattern);
    expect(fixtures?.test("import { createTestDatabase } from '../../../test/fixtures.ts';")).toBe(true);
    expect(inject?.test("import {\n  describe,\n  inject,\n  it,\n} from 'vitest';")).toBe(true);
    expect(harness?.test("import { startApp } from '../../test/app-harness.ts';")).toBe(true);
    expect(server?.test("import { startRedisServer } from '@flowbox/local-services';")).toBe(true);
    expect(server?.test("import type { ReceivedSpan } from '@flowbox/local-services';")).toBe(false);
    expect(build?.test('const pieces = await unpackBuiltPieces(dir);')).toBe(true);
  });
});
