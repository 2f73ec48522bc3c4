import type { StepView } from './api-types.ts';
import { statusBadge } from './badges.ts';
import { h } from './dom.ts';
import { type Iteration, type StepNode, statusUnder, stepTree } from './step-tree.ts';

/** A loop shows this many iterations (and any that failed) until its list is expanded. */
export const ITERATIONS_SHOWN = 5;

type StepCard = (step: StepView) => HTMLElement;

/**
 * A run's steps as a tree by path: each step's card, a router's branches under it (a branch that
 * did not run greyed, with why), a loop's iterations collapsed past ITERATIONS_SHOWN with a
 * control to show them all and a field to find one by index.
 */
export function stepTreeView(steps: readonly StepView[], card: StepCard): HTMLElement[] {
  return stepTree(steps).map((node) => nodeView(node, card));
}

function nodeView(node: StepNode<StepView>, card: StepCard): HTMLElement {
  const nested = [
    ...node.children.map((child) => nodeView(child, card)),
    node.iterations.length === 0 ? null : iterationsView(node, card),
  ].filter((element): element is HTMLElement => element !== null);
  if (node.result !== undefined) {
    if (nested.length === 0) return card(node.result);
    return h(
      'div',
      { class: 'step-group', 'data-path': node.path },
      card(node.result),
      h('div', { class: 'step-children' }, ...nested),
    );
  }
  // A branch (or a container whose own result is not recorded): its name and what ran in it.
  const status = statusUnder(node);
  const skipped = status === 'SKIPPED';
  const reason = skipped ? firstSkipReason(node) : undefined;
  return h(
    'section',
    { class: `step-branch${skipped ? ' skipped' : ''}`, 'data-path': node.path, 'data-status': status },
    h(
      'header',
      {},
      h('strong', { class: 'mono' }, node.name),
      statusBadge(status),
      reason === undefined ? null : h('span', { class: 'muted', 'data-testid': 'skip-reason' }, reason),
    ),
    h('div', { class: 'step-children' }, ...nested),
  );
}

function firstSkipReason(node: StepNode<StepView> | Iteration<StepView>): string | undefined {
  const own = 'result' in node ? node.result?.skipReason : undefined;
  if (own !== undefined) return own;
  for (const child of node.children) {
    const reason = firstSkipReason(child);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function iterationsView(loop: StepNode<StepView>, card: StepCard): HTMLElement {
  const { iterations } = loop;
  const views = iterations.map((iteration) => {
    const status = statusUnder(iteration);
    return {
      iteration,
      failed: status === 'FAILED',
      element: h(
        'div',
        {
          class: 'iteration',
          'data-iteration': iteration.index,
          'data-path': iteration.path,
          'data-status': status,
        },
        h(
          'header',
          {},
          h('span', { class: 'mono' }, `${loop.name}[${iteration.index}]`),
          statusBadge(status),
        ),
        ...iteration.children.map((child) => nodeView(child, card)),
      ),
    };
  });
  let expanded = false;
  const count = h('span', { class: 'muted', 'data-testid': 'iterations-count' });
  const expand = h('button', { type: 'button', class: 'link', 'data-testid': 'iterations-expand' });
  const search = h('input', {
    type: 'number',
    min: 0,
    placeholder: 'iteration #',
    'aria-label': `find an iteration of ${loop.name} by index`,
    'data-testid': 'iteration-search',
  });
  const apply = () => {
    const wanted = search.value === '' ? null : Number(search.value);
    let visible = 0;
    for (const [position, view] of views.entries()) {
      const show =
        wanted !== null
          ? view.iteration.index === wanted
          : expanded || position < ITERATIONS_SHOWN || view.failed;
      view.element.hidden = !show;
      if (show) visible += 1;
    }
    count.textContent =
      wanted !== null
        ? visible === 0
          ? `no iteration ${wanted}`
          : `iteration ${wanted}`
        : `${visible} of ${views.length} iterations`;
    expand.hidden = wanted !== null || views.length <= ITERATIONS_SHOWN;
    expand.textContent = expanded ? `Show the first ${ITERATIONS_SHOWN}` : `Show all ${views.length}`;
  };
  expand.addEventListener('click', () => {
    expanded = !expanded;
    apply();
  });
  search.addEventListener('input', apply);
  apply();
  return h(
    'div',
    { class: 'iterations', 'data-loop': loop.path },
    h('div', { class: 'iterations-bar' }, count, expand, search),
    ...views.map((view) => view.element),
  );
}
