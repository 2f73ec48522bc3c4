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
