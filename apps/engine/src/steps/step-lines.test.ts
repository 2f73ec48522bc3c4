import { describe, expect, it } from 'vitest';
import type { LeafOutcome } from '../flows/interpreter/leaf-executor.ts';
import { openPieceLog, pieceLogLine } from './step-lines.ts';

/** What a leaf executor answers for a piece step. */
const result: LeafOutcome = { output: { ok: true } };

describe('pieceLogLine', () => {
  it("maps the framework's levels and appends the data as JSON", () => {
    expect(pieceLogLine('trace', 'a')).toEqual({ level: 'debug', message: 'a' });
    expect(pieceLogLine('fatal', 'b', { n: 1 })).toEqual({ level: 'error', message: 'b {"n":1}' });
    expect(pieceLogLine('nonsense', 3, {})).toEqual({ level: 'info', message: '3' });
  });

  it('keeps the message alone when the data is not JSON', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(pieceLogLine('info', 'c', cyclic)).toEqual({ level: 'info', message: 'c' });
  });
});

describe('openPieceLog', () => {
  it('forwards every line, keeps those written while the step runs, and adds none when there were none', () => {
    const forwarded: unknown[] = [];
    const pieceLog = openPieceLog((...line) => forwarded.push(line));
    pieceLog.log('info', 'during', { a: 1 });
    const kept = pieceLog.keep({ ...result, logs: [{ level: 'log', message: 'console' }] });
    pieceLog.log('warn', 'after the step');
    expect(kept.logs).toEqual([
      { level: 'log', message: 'console' },
      { level: 'info', message: 'during {"a":1}' },
    ]);
    expect(forwarded).toEqual([
      ['info', 'during', { a: 1 }],
      ['warn', 'after the step', undefined],
    ]);
    expect(openPieceLog(() => {}).keep(result)).toBe(result);
  });
});
