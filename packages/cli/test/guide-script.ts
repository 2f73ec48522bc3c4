/**
 * A guide (docs/pieces.md, docs/flows.md) as a script: its ```sh blocks, in order, each
 * followed by what its `# prints:` comments expect. The guide test runs them in one bash (so `cd` and `export` carry on, as in
 * a terminal) and checks each block's output.
 */
export interface GuideBlock {
  index: number;
  code: string;
  /** Text the block's output must contain, in order of the comments. */
  expects: string[];
}

export function guideBlocks(markdown: string): GuideBlock[] {
  const blocks: GuideBlock[] = [];
  const fence = /^```sh\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(markdown); match !== null; match = fence.exec(markdown)) {
    const code = match[1] ?? '';
    const expects = [...code.matchAll(/^# prints: (.+)$/gm)].map((m) => m[1] ?? '');
    blocks.push({ index: blocks.length, code, expects });
  }
  return blocks;
}

export const BLOCK_MARK = '@@flowbox-guide-block';

/**
 * One bash script: each block between marks that carry the time, so the test can split the
 * output per block and time the steps. `set -e`: the first failing command stops it.
 */
export function guideScript(blocks: readonly GuideBlock[]): string {
  const parts = ['set -euo pipefail'];
  for (const block of blocks) {
    // Marks on lines of their own, even after output without a final newline (curl's).
    parts.push(
      `echo; echo "${BLOCK_MARK} ${block.index} start $(date +%s%3N)"`,
      block.code,
      `echo; echo "${BLOCK_MARK} ${block.index} end $(date +%s%3N)"`,
    );
  }
  return `${parts.join('\n')}\n`;
}

export interface BlockRun {
  output: string;
  startedAt: number;
  endedAt: number;
}

/** The output of each block that ran, by index, with its start and end (ms since the epoch). */
export function splitOutput(output: string): Map<number, BlockRun> {
  const runs = new Map<number, BlockRun>();
  let current: { index: number; startedAt: number; lines: string[] } | undefined;
  for (const line of output.split('\n')) {
    const mark = new RegExp(`^${BLOCK_MARK} (\\d+) (start|end) (\\d+)$`).exec(line);
    if (mark === null) {
      current?.lines.push(line);
      continue;
    }
    const [, index, kind, at] = mark;
    if (kind === 'start') current = { index: Number(index), startedAt: Number(at), lines: [] };
    else if (current !== undefined) {
      runs.set(current.index, {
        output: current.lines.join('\n'),
        startedAt: current.startedAt,
        endedAt: Number(at),
      });
      current = undefined;
    }
  }
  if (current !== undefined)
    runs.set(current.index, {
      output: current.lines.join('\n'),
      startedAt: current.startedAt,
      endedAt: Number.NaN,
    });
  return runs;
}
