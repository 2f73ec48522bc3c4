/**
 * A run's step results as the tree their paths describe (packages/protocol flow-tree.ts):
 * `route/big/notify` sits in router `route`'s branch `big`, `each[3]/check` in loop `each`'s
 * iteration 3. Pure (no DOM), so it is tested on its own (step-tree.test.ts). A result without a
 * path (runs recorded before flows nested) is placed by its name.
 */
export interface StepLike {
  name: string;
  path?: string | undefined;
  status: string;
}

export interface StepNode<S extends StepLike> {
  /** The segment's name: a step, a branch, or a loop. */
  name: string;
  /** The path to here, iterations included: `each[3]/check`. */
  path: string;
  /** The result recorded at exactly this path, if any (a branch has none). */
  result: S | undefined;
  children: StepNode<S>[];
  /** A loop's iterations, by index. */
  iterations: Iteration<S>[];
}

export interface Iteration<S extends StepLike> {
  index: number;
  path: string;
  children: StepNode<S>[];
}

const ITERATION = /^(.+)\[(\d+)\]$/;

export function stepTree<S extends StepLike>(steps: readonly S[]): StepNode<S>[] {
  const roots: StepNode<S>[] = [];
  for (const step of steps) {
    const segments = (step.path ?? step.name).split('/');
    let level = roots;
    let prefix = '';
    let node: StepNode<S> | undefined;
    for (const segment of segments) {
      const iteration = ITERATION.exec(segment);
      const name = iteration?.[1] ?? segment;
      const path = prefix === '' ? name : `${prefix}/${name}`;
      node = level.find((candidate) => candidate.name === name);
      if (node === undefined) {
        node = { name, path, result: undefined, children: [], iterations: [] };
        level.push(node);
      }
      if (iteration === null) {
        level = node.children;
        prefix = path;
        continue;
      }
      const index = Number(iteration[2]);
      let found = node.iterations.find((candidate) => candidate.index === index);
      if (found === undefined) {
        found = { index, path: `${path}[${index}]`, children: [] };
        node.iterations.push(found);
        node.iterations.sort((a, b) => a.index - b.index);
      }
      level = found.children;
      prefix = found.path;
      node = undefined;
    }
    if (node !== undefined) node.result = step;
  }
  return roots;
}

/** Every result at or below a node. */
export function resultsUnder<S extends StepLike>(node: StepNode<S> | Iteration<S>): S[] {
  const own = 'result' in node && node.result !== undefined ? [node.result] : [];
  const nested = 'iterations' in node ? node.iterations.flatMap(resultsUnder) : [];
  return [...own, ...node.children.flatMap(resultsUnder), ...nested];
}

/** FAILED when any result below failed, SKIPPED when every one was skipped, else SUCCEEDED. */
export function statusUnder<S extends StepLike>(node: StepNode<S> | Iteration<S>): string {
  const results = resultsUnder(node);
  if (results.some((result) => result.status === 'FAILED')) return 'FAILED';
  if (results.length > 0 && results.every((result) => result.status === 'SKIPPED')) return 'SKIPPED';
  return 'SUCCEEDED';
}
