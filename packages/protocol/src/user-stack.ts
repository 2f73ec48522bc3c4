import { CODE_STEP_FILENAME } from './code-step.ts';
import type { SerializedError } from './errors.ts';

/** A stack frame line: `    at fn (location)` or `    at location`. */
const FRAME = /^\s+at\s/;
/** A piece's cache folder, `<cache>/pieces/<name>@<version>-<sha256>/`, and the path inside it. */
const PIECE_LOCATION =
  /(?:file:\/\/)?[^\s()]*\/pieces\/((?:@[^/\s()]+\/)?[^/\s()@]+@[^/\s()]+?)-[0-9a-f]{64}\//;

/**
 * The part of a stack a flow's author can use: the header (`Error: message`) and the frames in
 * the flow's own code (code steps, as `file:///code-step.js`) and its pieces (as
 * `pieces/<name>@<version>/<file>`). Engine and worker frames, Node's internals and every cache
 * path are left out: they say nothing about the flow and show where the worker keeps its files.
 * Undefined when no frame of the flow is left (the message says it all).
 */
export function flowRelativeStack(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  const lines = stack.split('\n');
  const firstFrame = lines.findIndex((line) => FRAME.test(line));
  if (firstFrame === -1) return undefined;
  const frames = lines
    .slice(firstFrame)
    .filter((line) => FRAME.test(line))
    .flatMap((line) => {
      if (line.includes(CODE_STEP_FILENAME)) return [line];
      return PIECE_LOCATION.test(line) ? [line.replace(PIECE_LOCATION, 'pieces/$1/')] : [];
    });
  return frames.length === 0 ? undefined : [...lines.slice(0, firstFrame), ...frames].join('\n');
}

/** The error as users see it (run record, run log, API): its stack flow-relative only. */
export function forUsers(error: SerializedError): SerializedError {
  const { stack, ...rest } = error;
  const kept = flowRelativeStack(stack);
  return kept === undefined ? rest : { ...rest, stack: kept };
}
