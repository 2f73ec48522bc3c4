import { describe, expect, it } from 'vitest';
import { parseTrustedPieces } from '../pieces/trusted-pieces.ts';
import { flowIsolation } from './flow-isolation.ts';

const pure = { name: 'math-helper', version: '1.0.0', nodeBuiltins: [] };
const fs = { name: 'file-reader', version: '2.1.0', nodeBuiltins: ['fs'] };
const unchecked = { name: 'old-piece', version: '0.1.0', nodeBuiltins: null };

describe('flowIsolation', () => {
  it('allows an isolate when no piece imports a Node built-in', () => {
    expect(flowIsolation([], [])).toBe('isolate');
    expect(flowIsolation([pure], [])).toBe('isolate');
  });

  it('needs a process for a piece that imports one, or was never checked', () => {
    expect(flowIsolation([pure, fs], [])).toBe('process');
    expect(flowIsolation([unchecked], [])).toBe('process');
  });

  it('allows shared when every such piece is trusted, by name or by that version', () => {
    expect(flowIsolation([pure, fs], parseTrustedPieces('file-reader'))).toBe('shared');
    expect(flowIsolation([fs], parseTrustedPieces('file-reader@2.1.0'))).toBe('shared');
    expect(flowIsolation([fs], parseTrustedPieces('file-reader@2.0.0'))).toBe('process');
    expect(flowIsolation([fs, unchecked], parseTrustedPieces('file-reader'))).toBe('process');
    // Trust has no effect on a flow an isolate can run.
    expect(flowIsolation([pure], parseTrustedPieces('math-helper'))).toBe('isolate');
  });
});

describe('parseTrustedPieces', () => {
  it('reads names and name@version, ignoring blanks', () => {
    expect(parseTrustedPieces('')).toEqual([]);
    expect(parseTrustedPieces(' gmail , http@1.2.0,,')).toEqual([
      { name: 'gmail', version: null },
      { name: 'http', version: '1.2.0' },
    ]);
  });

  it('refuses what is not a piece name or version, naming it', () => {
    expect(() => parseTrustedPieces('Gmail')).toThrow(/"Gmail" is not a piece name/);
    expect(() => parseTrustedPieces('http@latest')).toThrow(/"http@latest"/);
  });
});
