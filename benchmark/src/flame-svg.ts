import type { FrameNode } from './cpu-profile.ts';

const WIDTH = 1200;
const ROW = 16;
const MIN_WIDTH_PX = 1;

/**
 * A flame graph of `tree` as a standalone SVG: the root at the bottom, callees above, widths in
 * CPU time. Every frame has a tooltip with its time and share; colours group frames by origin.
 */
export function flameGraphSvg(tree: FrameNode, title: string): string {
  const total = tree.totalMs;
  const rects: string[] = [];
  let maxDepth = 0;
  const placed: { frame: FrameNode; x: number; depth: number; width: number }[] = [];
  const place = (frame: FrameNode, x: number, depth: number) => {
    const width = total === 0 ? 0 : (frame.totalMs / total) * WIDTH;
    if (width < MIN_WIDTH_PX) return;
    maxDepth = Math.max(maxDepth, depth);
    placed.push({ frame, x, depth, width });
    let childX = x;
    const children = [...frame.children.values()].sort((a, b) => a.name.localeCompare(b.name));
    for (const child of children) {
      place(child, childX, depth + 1);
      childX += total === 0 ? 0 : (child.totalMs / total) * WIDTH;
    }
  };
  place(tree, 0, 0);
  const height = (maxDepth + 1) * ROW + 30;
  for (const p of placed) rects.push(frameRect(p.frame, p.x, height - (p.depth + 1) * ROW, p.width, total));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="4" y="16" font-size="13">${escapeXml(title)}: ${total.toFixed(0)} ms on CPU (idle excluded)</text>`,
    ...rects,
    '</svg>',
    '',
  ].join('\n');
}

function frameRect(frame: FrameNode, x: number, y: number, width: number, total: number): string {
  const share = total === 0 ? 0 : (100 * frame.totalMs) / total;
  const tip = `${frame.name} [${frame.origin}]: ${frame.totalMs.toFixed(1)} ms total (${share.toFixed(1)} %), ${frame.selfMs.toFixed(1)} ms self`;
  const chars = Math.floor((width - 4) / 6.6);
  const label =
    chars >= 3
      ? `<text x="${(x + 2).toFixed(1)}" y="${y + ROW - 4}">${escapeXml(
          frame.name.length > chars ? `${frame.name.slice(0, chars - 1)}…` : frame.name,
        )}</text>`
      : '';
  return `<g><title>${escapeXml(tip)}</title><rect x="${x.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${ROW - 1}" fill="${colourOf(frame.origin)}"/>${label}</g>`;
}

/** A stable warm colour per origin, so one package keeps its colour across graphs. */
export function colourOf(origin: string): string {
  let hash = 0;
  for (const char of origin) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const hue = origin.startsWith('apps/') || origin.startsWith('packages/') ? 200 + (hash % 40) : hash % 60;
  return `hsl(${hue} 75% ${60 + (hash % 15)}%)`;
}

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}
