import { noNewProcessesFilter } from '@flowbox/sandbox';
import { describe, expect, it } from 'vitest';
import { manifestOf, pieceSource } from '../../test/piece-archives.ts';
import { loadCheckPiece } from './piece-load-check.ts';
import type { LoadCheckIsolation } from './piece-load-sandbox.ts';

const PIECE = { name: 'checked', version: '1.0.0' };
const FILES = new Map([
  ['index.mjs', Buffer.from(pieceSource(PIECE))],
  ['manifest.json', Buffer.from(JSON.stringify(manifestOf(PIECE)))],
]);

// Real child processes (and a real bwrap): where each kind of load check runs, or why not.
describe('loadCheckPiece by where it may run', () => {
  const unavailable: LoadCheckIsolation = { mode: 'unavailable', reason: 'no bwrap in this test' };

  it('loads a piece in the sandbox', async () => {
    const seccomp = noNewProcessesFilter() ?? Buffer.alloc(0);
    const loaded = await loadCheckPiece(manifestOf(PIECE), FILES, {
      isolation: { mode: 'sandboxed', seccomp },
    });
    expect(loaded).toMatchObject({ piece: PIECE, actions: [{ name: 'greet' }], nodeBuiltins: [] });
  });

  it('refuses a piece when the sandbox is unavailable, naming why and the setting', async () => {
    await expect(loadCheckPiece(manifestOf(PIECE), FILES, { isolation: unavailable })).rejects.toMatchObject({
      code: 'PIECE_CHECK_UNAVAILABLE',
      message: expect.stringMatching(/no bwrap in this test.*PIECE_LOAD_CHECK=UNSANDBOXED/),
    });
  });

  it('loads a built-in piece without the sandbox when it is unavailable', async () => {
    const loaded = await loadCheckPiece(manifestOf(PIECE), FILES, { isolation: unavailable, builtIn: true });
    expect(loaded.piece).toEqual(PIECE);
  });

  it("answers PIECE_CHECK_UNAVAILABLE, not the piece's fault, when the sandbox fails to start", async () => {
    // Three bytes are no seccomp program: bubblewrap refuses it before node starts.
    const broken: LoadCheckIsolation = { mode: 'sandboxed', seccomp: Buffer.from([1, 2, 3]) };
    await expect(loadCheckPiece(manifestOf(PIECE), FILES, { isolation: broken })).rejects.toMatchObject({
      code: 'PIECE_CHECK_UNAVAILABLE',
      message: expect.stringMatching(/could not start its sandbox: bwrap: /),
    });
  });
});

/** The archive of a piece module whose one action `greet` is `action` (source text). */
function withAction(imports: string, action: string): Map<string, Buffer> {
  const source = [
    imports,
    "import { createAction, createPiece, Property } from '@flowbox/pieces-framework';",
    `export default createPiece({ name: 'checked', version: '1.0.0', actions: [${action}] });`,
  ].join('\n');
  return new Map([
    ['index.mjs', Buffer.from(source)],
    ['manifest.json', Buffer.from(JSON.stringify(manifestOf(PIECE)))],
  ]);
}

// Inputs are validated by the engine from the published JSON Schema: what it cannot check is refused.
describe('loadCheckPiece on input declarations', () => {
  const check = (files: Map<string, Buffer>) =>
    loadCheckPiece(manifestOf(PIECE), files, {
      isolation: { mode: 'unavailable', reason: 'not needed here' },
      builtIn: true,
    });

  it('refuses a piece that declares its input with zod, saying how to upgrade', async () => {
    const files = withAction(
      "import { z } from 'zod';",
      "createAction({ name: 'greet', description: '', input: z.object({ who: z.string() }), run: () => ({}) })",
    );
    await expect(check(files)).rejects.toMatchObject({
      code: 'INVALID_PIECE',
      message: expect.stringMatching(
        /action greet declares its input as a zod schema.*props: \{ field: Property\.ShortText.*docs\/pieces\.md/,
      ),
    });
  });

  it('refuses a zod refinement or transform as a prop, naming the field', async () => {
    const files = withAction(
      "import { z } from 'zod';",
      "createAction({ name: 'greet', description: '', props: { who: z.string().transform((s) => s.trim()) }, run: () => ({}) })",
    );
    await expect(check(files)).rejects.toMatchObject({
      code: 'INVALID_PIECE',
      message: expect.stringMatching(/action greet, field who: a zod schema is not supported/),
    });
  });

  it('refuses a hand-written input schema with a keyword the builders do not write, naming the field', async () => {
    const files = withAction(
      '',
      "{ name: 'greet', description: '', props: {}, inputSchema: { type: 'object', properties: { who: { type: 'string', pattern: '^(a+)+$' } } }, execute: async () => ({}) }",
    );
    await expect(check(files)).rejects.toMatchObject({
      code: 'INVALID_PIECE',
      message: "action greet: field who: 'pattern' is not supported",
    });
  });

  it("reports the builders' schema as the action's input schema", async () => {
    const loaded = await check(FILES);
    expect(loaded.actions[0]?.inputSchema).toEqual({
      type: 'object',
      properties: { who: { type: 'string', title: 'Who', minLength: 1 } },
      required: ['who'],
      additionalProperties: false,
    });
  });
});
