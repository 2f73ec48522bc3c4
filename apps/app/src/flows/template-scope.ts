import {
  CONNECTIONS_ROOT,
  type FlowDefinition,
  findTemplateReferences,
  type StepDefinition,
  type StepVisit,
  type TemplateReference,
  WAITS_ROOT,
  walkSteps,
} from '@flowbox/protocol';

/**
 * Template scope: what a template in a step may name. A step reads `trigger`, `connections`, and
 * the steps that certainly ran before it: its earlier siblings and the earlier siblings of every
 * router and loop around it. Inside a loop's body `{{<loop>.item}}` and `{{<loop>.index}}` name
 * the current iteration; a router or loop that ended before the step is read whole
 * (`{{route.branch}}`, `{{each.iterations}}`). A step inside a branch or a loop's body is never
 * read from outside it: the branch may not have run, and the body ran once per item.
 */

/** The fields of a step that may hold templates (the engine resolves each), named as in its JSON. */
export function templatedFields(step: StepDefinition): { field: string; value: unknown }[] {
  switch (step.type) {
    case 'piece':
    case 'code':
      return [{ field: 'input', value: step.input }];
    case 'router':
      return step.branches.map((branch, b) => ({ field: `branches.${b}.when`, value: branch.when }));
    case 'loop':
      return [{ field: 'items', value: step.items }];
    case 'stop':
      return [
        ...(step.message === undefined ? [] : [{ field: 'message', value: step.message }]),
        ...(step.response === undefined ? [] : [{ field: 'response', value: step.response }]),
      ];
    case 'delay':
      return [
        ...(step.for === undefined ? [] : [{ field: 'for', value: step.for }]),
        ...(step.until === undefined ? [] : [{ field: 'until', value: step.until }]),
      ];
    case 'wait':
      return [];
    case 'flow':
      return [{ field: 'input', value: step.input }];
  }
}

/** What a loop's body reads of the loop: the current item and its index. */
const LOOP_ITERATION_FIELDS: ReadonlySet<string> = new Set(['item', 'index']);

/** A branch or loop body a step sits in: `route/big` or `each`. */
interface Body {
  id: string;
  container: StepDefinition;
  branch: string | undefined;
}

/** The bodies around a step, outermost first, read off its path and parents. */
function bodiesOf(visit: StepVisit): Body[] {
  const segments = visit.path.split('/');
  const bodies: Body[] = [];
  let used = 0;
  for (const container of visit.parents) {
    const width = container.type === 'router' ? 2 : 1;
    used += width;
    const id = segments.slice(0, used).join('/');
    bodies.push({ id, container, branch: container.type === 'router' ? segments[used - 1] : undefined });
  }
  return bodies;
}

/**
 * Every template in the flow that names what its step cannot read, in definition order, each as
 * `<JSON path>: template {{x}} in step 'a' names ...` (both steps, the template and where).
 * Empty when every template is in scope. Names are unique across the flow (checked before).
 */
export function templateScopeProblems(definition: Pick<FlowDefinition, 'steps'>): string[] {
  const visits = walkSteps(definition);
  const byName = new Map(visits.map((visit) => [visit.step.name, visit]));
  const problems: string[] = [];
  // `before`: the steps that certainly ran before this body; each body adds its own as it goes.
  const check = (steps: StepDefinition[], before: ReadonlySet<string>) => {
    const seen = new Set(before);
    for (const step of steps) {
      const visit = byName.get(step.name);
      if (visit === undefined) continue;
      for (const { field, value } of templatedFields(step)) {
        for (const reference of findTemplateReferences(value)) {
          const problem = referenceProblem(visit, reference, seen, byName);
          if (problem === null) continue;
          const where =
            reference.path === '' ? `${visit.at}.${field}` : `${visit.at}.${field}.${reference.path}`;
          problems.push(`${where}: template {{${reference.expression}}} in step '${step.name}' ${problem}`);
        }
      }
      if (step.type === 'router') {
        for (const branch of step.branches) check(branch.steps, seen);
        if (step.otherwise !== undefined) check(step.otherwise, seen);
      } else if (step.type === 'loop') {
        check(step.steps, seen);
      }
      seen.add(step.name);
    }
  };
  check(definition.steps, new Set());
  return problems;
}

/** What `{{waits.<name>}}` holds: a wait step's URLs (durable.ts WaitStepUrls). */
const WAIT_URL_FIELDS: ReadonlySet<string> = new Set(['resumeUrl', 'syncUrl', 'approveUrl', 'rejectUrl']);

/**
 * `{{waits.<name>.<url>}}`: `<name>` a wait step of the flow, outside any loop `visit`'s step is
 * not in (a loop's waits have a URL per iteration, known inside its body only).
 */
function waitsProblem(
  visit: StepVisit,
  reference: TemplateReference,
  byName: ReadonlyMap<string, StepVisit>,
): string | null {
  const [, name, field] = reference.segments;
  if (name === undefined)
    return `names '${WAITS_ROOT}' without a wait step: write {{${WAITS_ROOT}.<wait>.resumeUrl}}`;
  const target = byName.get(name);
  if (target?.step.type !== 'wait')
    return `names '${WAITS_ROOT}.${name}', and '${name}' is not a wait step of this flow`;
  if (field !== undefined && !WAIT_URL_FIELDS.has(field)) {
    return `names '${WAITS_ROOT}.${name}.${field}': a wait's URLs are ${[...WAIT_URL_FIELDS].join(', ')}`;
  }
  const loop = target.parents.find((parent) => parent.type === 'loop' && !visit.parents.includes(parent));
  if (loop !== undefined) {
    return `names the URLs of wait '${name}' in loop '${loop.name}''s body, which step '${visit.step.name}' is not in: they differ per iteration`;
  }
  return null;
}

/** Why `visit`'s step may not read `reference`, given the steps that ran before it, or null. */
function referenceProblem(
  visit: StepVisit,
  reference: TemplateReference,
  before: ReadonlySet<string>,
  byName: ReadonlyMap<string, StepVisit>,
): string | null {
  const { root } = reference;
  if (root === 'trigger' || root === CONNECTIONS_ROOT) return null;
  if (root === WAITS_ROOT && !byName.has(WAITS_ROOT)) return waitsProblem(visit, reference, byName);
  const field = reference.segments[1];
  const around = visit.parents.find((parent) => parent.name === root);
  if (around?.type === 'loop') {
    if (field !== undefined && LOOP_ITERATION_FIELDS.has(field)) return null;
    return `names loop '${root}' from inside its body, where only {{${root}.item}} and {{${root}.index}} exist; read {{${root}.iterations}} after the loop`;
  }
  if (around?.type === 'router') {
    return `names router '${root}' from inside its own branch: the router's output exists once it ends`;
  }
  if (root === visit.step.name) return `names step '${root}' itself`;
  const target = byName.get(root);
  if (target === undefined) return `names '${root}', which is not the trigger or a step of this flow`;
  if (before.has(root)) {
    if (target.step.type === 'loop' && field !== undefined && LOOP_ITERATION_FIELDS.has(field)) {
      return `names {{${root}.${field}}} outside loop '${root}''s body; after the loop read {{${root}.iterations}}`;
    }
    if (target.step.type === 'stop') return `names stop step '${root}', which ends the run and has no output`;
    return null;
  }
  const mine = new Set(bodiesOf(visit).map((body) => body.id));
  const hidden = bodiesOf(target).find((body) => !mine.has(body.id));
  if (hidden?.container.type === 'router') {
    const ran = hidden.container.mode === 'all' ? 'branches' : 'branch';
    return `names step '${root}' (${target.path}) in router '${hidden.container.name}''s branch '${hidden.branch}', which step '${visit.step.name}' is not in: that branch may not have run; read {{${hidden.container.name}.${ran}}} after the router`;
  }
  if (hidden?.container.type === 'loop') {
    return `names step '${root}' (${target.path}) in loop '${hidden.container.name}''s body, which step '${visit.step.name}' is not in; read {{${hidden.container.name}.iterations}} after the loop`;
  }
  return `names step '${root}' (${target.path}), which runs after step '${visit.step.name}' (${visit.path})`;
}
