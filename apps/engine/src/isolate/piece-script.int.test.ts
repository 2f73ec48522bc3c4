import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { builtPieceArchives, unpackBuiltPieces } from '../../test/support/index.ts';
import { pieceScript } from './piece-script.ts';

const BUILTINS = new Set(builtinModules);

/** Runs the script with `definePiece` and the shared modules stood in for, returning its exports. */
function evaluate(code: string, shared: Record<string, object>): Record<string, unknown> {
  let exported: Record<string, unknown> = {};
  const __flowbox = {
    definePiece(body: (load: (specifier: string) => object) => Record<string, unknown>) {
      exported = body((specifier) => shared[specifier] ?? {});
    },
  };
  new Function('__flowbox', code)(__flowbox);
  return exported;
}

describe("a piece's ES module as an isolate script", () => {
  it('turns every import clause esbuild writes into constants, and the export list into the result', () => {
    const source = [
      'import{a as b,c}from"zod";',
      'import*as ns from"@flowbox/pieces-framework";',
      'import d,{e}from"zod";',
      'import"zod";',
      'var piece={b,c,ns,d,e};',
      'export{piece as default,c as "odd name"};',
    ].join('');
    const zod = { a: 1, c: 2, default: 3, e: 4 };
    const framework = { f: 5 };
    const { code, imports } = pieceScript('p@1.0.0', source, BUILTINS);
    expect(imports.sort()).toEqual(['@flowbox/pieces-framework', 'zod']);
    const exported = evaluate(code, { zod, '@flowbox/pieces-framework': framework });
    expect(exported.default).toEqual({ b: 1, c: 2, ns: framework, d: 3, e: 4 });
    expect(exported['odd name']).toBe(2);
  });

  it.each([
    ['import{createHash}from"node:crypto";export{createHash as default};', "Node built-in 'node:crypto'"],
    ['import fs from"fs";export{fs as default};', "Node built-in 'fs'"],
    ['const m=await import("zod");export{m as default};', 'import()'],
    ['const u=import.meta.url;export{u as default};', 'import.meta'],
  ])('refuses %s with PIECE_NOT_ISOLATABLE naming it', (source, named) => {
    expect(() => pieceScript('p@1.0.0', source, BUILTINS)).toThrow(
      expect.objectContaining({ code: 'PIECE_NOT_ISOLATABLE', message: expect.stringContaining(named) }),
    );
  });

  it('converts every built-in piece (the piece build writes what the isolate takes)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-piece-script-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const pieces = await unpackBuiltPieces(dir);
    expect(pieces.map((p) => p.name).sort()).toEqual((await builtPieceArchives()).map((p) => p.name).sort());
    for (const piece of pieces) {
      const source = await readFile(join(piece.dir, 'index.mjs'), 'utf8');
      const { imports } = pieceScript(piece.name, source, BUILTINS);
      expect(
        imports.every((name) => name === 'zod' || name === '@flowbox/pieces-framework'),
        piece.name,
      ).toBe(true);
    }
  });
});
