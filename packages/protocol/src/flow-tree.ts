import type { FlowDefinition, StepDefinition } from './flow.ts';

/**
 * A flow's steps form a tree: a router holds a body per branch (and `otherwise`), a loop one body.
 * A step's path names where it sits: `notify` at the top, `route/big/notify` in a router's
 * branch `big`, `each/check` in a loop's body. A run's results add the iteration:
 * `each[3]/check` (stepPath below).
 */

/** The name of a router's fallback body in paths. */
export const OTHERWISE = 'otherwise';

export interface StepVisit {
  step: StepDefinition;
  /** Its static path: `route/big/notify`. */
  path: string;
  /** Where it is in the definition's JSON, for errors: `definition.steps.0.branches.1.steps.2`. */
  at: string;
  /** Routers and loops around it, outermost first. */
  parents: StepDefinition[];
}

/** Every step of a flow, depth first in definition order (a router before its branches' steps). */
export function walkSteps(definition: Pick<FlowDefinition, 'steps'>): StepVisit[] {
  const visits: StepVisit[] = [];
  const walk = (steps: StepDefinition[], prefix: string, at: string, parents: StepDefinition[]) => {
    steps.forEach((step, index) => {
      const here = `${at}.${index}`;
      visits.push({ step, path: `${prefix}${step.name}`, at: here, parents });
      const inner = [...parents, step];
      if (step.type === 'router') {
        step.branches.forEach((branch, b) => {
          walk(branch.steps, `${prefix}${step.name}/${branch.name}/`, `${here}.branches.${b}.steps`, inner);
        });
        if (step.otherwise !== undefined) {
          walk(step.otherwise, `${prefix}${step.name}/${OTHERWISE}/`, `${here}.otherwise`, inner);
        }
      } else if (step.type === 'loop') {
        walk(step.steps, `${prefix}${step.name}/`, `${here}.steps`, inner);
      }
    });
  };
  walk(definition.steps, '', 'definition.steps', []);
  return visits;
}

/** A step's path in a run: its parents' segments, loops with the iteration (`each[3]/check`). */
export function stepPath(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}/${name}`;
}
