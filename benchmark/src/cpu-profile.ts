/**
 * Reads V8 `.cpuprofile` files (node --cpu-prof) into one call tree per process kind, with time
 * in milliseconds, for the flame graphs and top-function tables of `pnpm bench --cpu-prof`.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** Microseconds before each sample. */
  timeDeltas: number[];
}

/** A frame in the merged tree: `selfMs` spent in it, `totalMs` in it and what it called. */
export interface FrameNode {
  name: string;
  /** Where the code lives: a package name, a flowbox source path, `node:` or a V8 category. */
  origin: string;
  selfMs: number;
  totalMs: number;
  children: Map<string, FrameNode>;
}

/** V8's pseudo-frames for time in no JavaScript function. */
const IDLE = '(idle)';

export function emptyTree(): FrameNode {
  return { name: 'all', origin: '', selfMs: 0, totalMs: 0, children: new Map() };
}

/**
 * Adds a profile into `tree`. Each sample is charged the time until the next one; idle samples
 * are dropped, so the tree holds only the time the process was on a CPU (or waiting in V8).
 */
export function addProfile(tree: FrameNode, profile: CpuProfile, repoRoot: string): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  for (const [id, us] of selfUs) {
    const path: ProfileNode[] = [];
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parentOf.get(cursor)) {
      const node = byId.get(cursor);
      if (node !== undefined && node.callFrame.functionName !== '(root)') path.unshift(node);
    }
    if (path.length === 0 || path.at(-1)?.callFrame.functionName === IDLE) continue;
    const ms = us / 1000;
    let frame = tree;
    frame.totalMs += ms;
    for (const node of path) {
      const name = frameName(node.callFrame, repoRoot);
      let child = frame.children.get(name);
      if (child === undefined) {
        child = {
          name,
          origin: originOf(node.callFrame, repoRoot),
          selfMs: 0,
          totalMs: 0,
          children: new Map(),
        };
        frame.children.set(name, child);
      }
      child.totalMs += ms;
      frame = child;
    }
    frame.selfMs += ms;
  }
}

/** `fn (file:line)`, with the repository root and pnpm's store path cut off. */
export function frameName(frame: CallFrame, repoRoot: string): string {
  const fn = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return fn;
  return `${fn} (${shortUrl(frame.url, repoRoot)}:${frame.lineNumber + 1})`;
}

function shortUrl(url: string, repoRoot: string): string {
  let path = filePath(url);
  const cached = cachedArtifact(path);
  if (cached !== null) return cached;
  const store = path.lastIndexOf('/node_modules/');
  if (store >= 0) return path.slice(store + '/node_modules/'.length);
  if (path.startsWith(`${repoRoot}/`)) path = path.slice(repoRoot.length + 1);
  return path;
}

/**
 * The package a frame belongs to: `fastify`, `@aws-sdk/client-s3`, `apps/app`, `node:` for
 * Node's own JavaScript, or V8's category for `(garbage collector)` and `(program)`.
 */
export function originOf(frame: CallFrame, repoRoot: string): string {
  const { url } = frame;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : 'native';
  if (url.startsWith('node:')) return 'node:';
  const path = filePath(url);
  const cached = cachedArtifact(path);
  if (cached !== null) return cached;
  const store = path.lastIndexOf('/node_modules/');
  if (store >= 0) {
    const parts = path.slice(store + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1]}` : (parts[0] ?? path);
  }
  const relative = path.startsWith(`${repoRoot}/`) ? path.slice(repoRoot.length + 1) : path;
  const match = /^(apps|packages)\/[^/]+/.exec(relative);
  return match === null ? relative : match[0];
}

function filePath(url: string): string {
  return url.replace(/^file:\/\//, '').replace(/\?.*$/, '');
}

/** The engine bundle and piece archives run from a worker's cache directory, not the repository. */
function cachedArtifact(path: string): string | null {
  if (/\/engine\/[0-9a-f]{64}\/engine(-snapshot)?\.[cm]js$/.test(path)) return 'apps/engine (bundle)';
  const piece = /\/pieces\/([^/@]+)@[^/]+\//.exec(path);
  return piece === null ? null : `piece ${piece[1]}`;
}

export interface SelfTime {
  key: string;
  ms: number;
}

/** Self time summed by `keyOf` over the whole tree, largest first. */
export function selfTimeBy(tree: FrameNode, keyOf: (frame: FrameNode) => string): SelfTime[] {
  const sums = new Map<string, number>();
  const visit = (frame: FrameNode) => {
    if (frame.selfMs > 0) {
      const key = keyOf(frame);
      sums.set(key, (sums.get(key) ?? 0) + frame.selfMs);
    }
    for (const child of frame.children.values()) visit(child);
  };
  for (const child of tree.children.values()) visit(child);
  return [...sums].map(([key, ms]) => ({ key, ms })).sort((a, b) => b.ms - a.ms);
}
