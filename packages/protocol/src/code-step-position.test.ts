import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CODE_STEP_FILENAME, CODE_STEP_LINE_OFFSET, wrapCodeStep } from './code-step.ts';
import {
  codeStepLines,
  codeStepPosition,
  describeCodeStepPosition,
  withoutLocationSuffix,
} from './code-step-position.ts';

/** The error node:vm gives for `code` compiled as the app and the engine compile it. */
function compileError(code: string): unknown {
  try {
    new Script(wrapCodeStep(code), {
      filename: `file:///${CODE_STEP_FILENAME}`,
      lineOffset: CODE_STEP_LINE_OFFSET,
    });
  } catch (error) {
    return error;
  }
  throw new Error('expected a compile error');
}

const at = (error: unknown, code: string) => {
  const position = codeStepPosition(error, codeStepLines(code));
  return position === undefined ? undefined : describeCodeStepPosition(position);
};

describe('codeStepPosition', () => {
  it("reads node:vm's compile error: the line, and the column from its caret", () => {
    const code = 'const a = 1;\n  return {;';
    expect(at(compileError(code), code)).toBe('line 2, column 11');
    const twice = 'let x = 1;\n    let let = 2;';
    expect(at(compileError(twice), twice)).toBe('line 2, column 9');
  });

  it('says the end of the code when the code stops inside a string or a block', () => {
    const code = 'const s = `abc';
    expect(at(compileError(code), code)).toBe('end of the code, line 1');
    const closed = 'return 1;\n}';
    expect(at(compileError(closed), closed)).toBe('end of the code, line 2');
  });

  it("reads isolated-vm's suffix and leaves the message without it", () => {
    const error = { message: "Unexpected token ';' [file:///code-step.js:1:9]", stack: '' };
    expect(at(error, 'return {;')).toBe('line 1, column 9');
    expect(withoutLocationSuffix(error.message)).toBe("Unexpected token ';'");
  });

  it("takes a runtime error's first frame on the code's lines, past the wrapper's", () => {
    const stack = [
      'Error: boom',
      '    at JSON.stringify (<anonymous>)',
      '    at f (file:///code-step.js:2:9)',
      '    at codeStep (file:///code-step.js:4:1)',
    ].join('\n');
    expect(at({ message: 'boom', stack }, 'a\nb\nc\nd')).toBe('line 2, column 9');
    // A frame of the wrapper's last line (past the code) is not the user's.
    expect(
      at({ message: 'x', stack: 'TypeError: x\n    at file:///code-step.js:3:5' }, 'a\nb'),
    ).toBeUndefined();
  });

  it('finds nothing without a location', () => {
    expect(codeStepPosition('a string', 1)).toBeUndefined();
    expect(
      codeStepPosition({ message: 'boom', stack: 'Error: boom\n    at engine.js:1:1' }, 1),
    ).toBeUndefined();
    expect(codeStepPosition(null, 1)).toBeUndefined();
  });
});
