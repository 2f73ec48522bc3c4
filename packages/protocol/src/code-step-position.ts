import { CODE_STEP_FILENAME } from './code-step.ts';

/**
 * Where in a code step's own code an error happened, as people count (line 1 is the code's first
 * line, column 1 its first character), read from what V8 reports once the code is compiled with
 * CODE_STEP_LINE_OFFSET: a runtime error's first frame on one of the code's lines, a syntax
 * error's location (node:vm puts `file:line`, the line and a caret above the message;
 * isolated-vm appends ` [file:line:column]` to the message).
 */
export interface CodeStepPosition {
  line: number;
  /** Absent when V8 gave the line only. */
  column?: number;
  /** Past the code's last line: the code ended before a statement or string did. */
  atEnd?: boolean;
}

const FILE = CODE_STEP_FILENAME.replace('.', '\\.');
/** A stack frame's location in the code: `code-step.js:<line>:<column>`. */
const FRAME_LOCATION = new RegExp(`^\\s+at\\s.*${FILE}:(\\d+):(\\d+)\\)?$`);
/** isolated-vm's suffix on a compile error's message. */
const IVM_SUFFIX = new RegExp(` \\[(?:file:///)?${FILE}:(\\d+):(\\d+)\\]$`);
/** node:vm's first line of a compile error's stack. */
const NODE_HEADER = new RegExp(`^(?:file:///)?${FILE}:(\\d+)$`);

/** The position of `error` in a code step of `userLines` lines, when V8 said where it was. */
export function codeStepPosition(error: unknown, userLines: number): CodeStepPosition | undefined {
  const { message, stack } = textsOf(error);
  const within = (line: number, column: number | undefined): CodeStepPosition | undefined => {
    if (line > userLines) return { line: userLines, atEnd: true };
    if (line < 1) return undefined;
    return column === undefined ? { line } : { line, column };
  };
  const ivm = IVM_SUFFIX.exec(message);
  if (ivm !== null) return within(Number(ivm[1]), Number(ivm[2]));
  const lines = stack.split('\n');
  const header = NODE_HEADER.exec(lines[0] ?? '');
  if (header !== null) {
    const caret = (lines[2] ?? '').indexOf('^');
    return within(Number(header[1]), caret === -1 ? undefined : caret + 1);
  }
  for (const line of lines) {
    const frame = FRAME_LOCATION.exec(line);
    // The first frame on the code's own lines: the wrapper's frames are outside them.
    if (frame !== null && Number(frame[1]) >= 1 && Number(frame[1]) <= userLines) {
      return { line: Number(frame[1]), column: Number(frame[2]) };
    }
  }
  return undefined;
}

/** `line 3, column 12`, `line 3`, or `end of the code, line 3`. */
export function describeCodeStepPosition(position: CodeStepPosition): string {
  if (position.atEnd === true) return `end of the code, line ${position.line}`;
  return position.column === undefined
    ? `line ${position.line}`
    : `line ${position.line}, column ${position.column}`;
}

/** A message without isolated-vm's location suffix: the position is said once, in words. */
export function withoutLocationSuffix(message: string): string {
  return message.replace(IVM_SUFFIX, '');
}

/** How many lines of its own a code step's code has. */
export function codeStepLines(code: string): number {
  return code.split('\n').length;
}

function textsOf(error: unknown): { message: string; stack: string } {
  if (typeof error !== 'object' || error === null) return { message: '', stack: '' };
  const { message, stack } = error as { message?: unknown; stack?: unknown };
  return {
    message: typeof message === 'string' ? message : '',
    stack: typeof stack === 'string' ? stack : '',
  };
}
