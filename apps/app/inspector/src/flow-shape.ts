import type { VersionView } from './api-types.ts';
import { h } from './dom.ts';

type Definition = VersionView['definition'];
type Step = Definition['steps'][number];
type Condition = Extract<Step, { type: 'router' }>['branches'][number]['when'][number][number];

/**
 * A version's shape: its steps in order, a router with a column per branch (its conditions
 * above its steps) and its fallback, a loop with its body, nested as deep as the flow is.
 */
export function flowShape(definition: Definition): HTMLElement {
  return h('div', { class: 'flow-shape', 'data-testid': 'flow-shape' }, stepList(definition.steps, ''));
}

function stepList(steps: readonly Step[], prefix: string): HTMLElement {
  return h('ol', { class: 'shape-steps' }, ...steps.map((step) => shapeStep(step, prefix)));
}

function shapeStep(step: Step, prefix: string): HTMLElement {
  const path = `${prefix}${step.name}`;
  const head = (kind: string, ...detail: string[]) =>
    h(
      'div',
      { class: 'shape-head' },
      h('strong', { class: 'mono' }, step.name),
      h('span', { class: 'shape-kind' }, kind),
      ...detail.map((text) => h('span', { class: 'muted mono' }, text)),
    );
  const item = (kind: string, ...children: (Node | null)[]) =>
    h(
      'li',
      { class: `shape-step shape-${kind}`, 'data-shape-path': path, 'data-shape-kind': kind },
      ...children,
    );
  switch (step.type) {
    case 'piece':
      return item('piece', head(`${step.piece}/${step.action}`, ...failureSettings(step)));
    case 'code':
      return item('code', head('code', ...failureSettings(step)));
    case 'delay':
      return item('delay', head('delay', step.for === undefined ? `until ${step.until}` : `for ${step.for}`));
    case 'wait':
      return item(
        'wait',
        head('wait', step.kind, step.timeout === undefined ? '' : `timeout ${step.timeout}`),
      );
    case 'flow':
      return item('flow', head('flow', step.flowId, step.wait ? 'waits for it' : 'does not wait'));
    case 'stop':
      return item(
        'stop',
        head('stop', step.status, step.response === undefined ? '' : `answers ${step.response.status}`),
      );
    case 'loop':
      return item(
        'loop',
        head(
          'loop',
          `over ${typeof step.items === 'string' ? step.items : `${step.items.length} items`}`,
          step.concurrency > 1 ? `${step.concurrency} at once` : 'one at a time',
        ),
        h('div', { class: 'shape-body' }, stepList(step.steps, `${path}/`)),
      );
    case 'router':
      return item(
        'router',
        head(
          'router',
          step.mode === 'all' ? `every match${step.parallel === true ? ', in parallel' : ''}` : 'first match',
        ),
        h(
          'div',
          { class: 'shape-branches' },
          ...step.branches.map((branch) =>
            h(
              'div',
              { class: 'shape-branch', 'data-shape-path': `${path}/${branch.name}` },
              h('div', { class: 'shape-branch-name mono' }, branch.name),
              h('div', { class: 'shape-when mono muted' }, whenText(branch.when)),
              stepList(branch.steps, `${path}/${branch.name}/`),
            ),
          ),
          step.otherwise === undefined
            ? null
            : h(
                'div',
                { class: 'shape-branch otherwise', 'data-shape-path': `${path}/otherwise` },
                h('div', { class: 'shape-branch-name mono' }, 'otherwise'),
                stepList(step.otherwise, `${path}/otherwise/`),
              ),
        ),
      );
  }
}

function failureSettings(step: {
  continueOnFailure?: boolean | undefined;
  timeoutMs?: number | undefined;
}): string[] {
  return [
    step.continueOnFailure === true ? 'continues on failure' : '',
    step.timeoutMs === undefined ? '' : `times out at ${step.timeoutMs} ms`,
  ].filter((text) => text !== '');
}

/** `a gt 100 and b exists or c eq "x"`: groups joined by `or`, conditions by `and`. */
function whenText(when: readonly (readonly Condition[])[]): string {
  const side = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  return when
    .map((group) =>
      group
        .map((condition) =>
          condition.right === undefined
            ? `${side(condition.left)} ${condition.op}`
            : `${side(condition.left)} ${condition.op} ${side(condition.right)}`,
        )
        .join(' and '),
    )
    .join(' or ');
}
