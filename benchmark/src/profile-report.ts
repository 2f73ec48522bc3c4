import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { addProfile, emptyTree, type FrameNode, selfTimeBy } from './cpu-profile.ts';
import { flameGraphSvg } from './flame-svg.ts';

const TOP = 15;

/**
 * After `pnpm bench --cpu-prof <dir>`: for every scenario and process kind under `dir`, merges
 * the processes' profiles, writes `<scenario>/<kind>.svg` (a flame graph) and one `profile.md`
 * with each kind's self time by package and its top functions. Returns the summary's path.
 */
export async function writeProfileReport(dir: string, repoRoot: string): Promise<string> {
  const lines = [
    '# CPU profiles',
    '',
    'V8 sampling profiles (`node --cpu-prof`) of every process of each kind over the whole scenario',
    "(start-up, warm-up and the measured repeats; idle time excluded). Shares are of the kind's",
    'CPU time in the profile. Flame graphs: `<scenario>/<kind>.svg` (hover a frame for its time).',
    '',
  ];
  for (const scenario of await subdirectories(dir)) {
    lines.push(`## ${scenario}`, '');
    for (const kind of await subdirectories(join(dir, scenario))) {
      const tree = await mergedTree(join(dir, scenario, kind), repoRoot);
      if (tree === null) continue;
      await writeFile(join(dir, scenario, `${kind}.svg`), flameGraphSvg(tree, `${scenario} ${kind}`));
      lines.push(...kindSection(`${scenario}/${kind}`, tree), '');
    }
  }
  const summary = join(dir, 'profile.md');
  await writeFile(summary, `${lines.join('\n')}\n`);
  return summary;
}

async function mergedTree(dir: string, repoRoot: string): Promise<FrameNode | null> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) return null;
  const tree = emptyTree();
  for (const file of files) addProfile(tree, JSON.parse(await readFile(join(dir, file), 'utf8')), repoRoot);
  return tree;
}

/** `path`: `<scenario>/<kind>`, where its flame graph is, relative to profile.md. */
function kindSection(path: string, tree: FrameNode): string[] {
  const kind = path.split('/').pop() ?? path;
  const share = (ms: number) => `${((100 * ms) / tree.totalMs).toFixed(1)} %`;
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const origins = selfTimeBy(tree, (frame) => frame.origin).slice(0, TOP);
  const functions = selfTimeBy(tree, (frame) => frame.name).slice(0, TOP);
  return [
    `### ${kind}: ${tree.totalMs.toFixed(0)} ms on CPU ([flame graph](${path}.svg))`,
    '',
    row(['self time by package', 'share', 'top functions (self time)', 'share']),
    row(['---', '---:', '---', '---:']),
    ...Array.from({ length: Math.max(origins.length, functions.length) }, (_, i) =>
      row([
        codeCell(origins[i]?.key),
        origins[i] === undefined ? '' : share(origins[i].ms),
        codeCell(functions[i]?.key),
        functions[i] === undefined ? '' : share(functions[i].ms),
      ]),
    ),
  ];
}

const codeCell = (text: string | undefined) =>
  text === undefined ? '' : `\`${text.replaceAll('|', '\\|')}\``;

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}
