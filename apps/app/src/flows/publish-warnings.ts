import type { FlowDefinition, StepDefinition } from '@flowbox/protocol';
import { RESPONSE_STEP } from './response-step-check.ts';

/**
 * What a definition's author should know before its sync webhook is called, though it can run:
 * a sync caller whose run succeeds without a step answering gets 204 No Content
 * (docs/architecture.md), which is rarely what a flow called sync means to answer.
 */
export function publishWarnings(definition: Pick<FlowDefinition, 'steps'>): string[] {
  const answers = answering(definition.steps);
  const late = answersAfterWaiting(definition.steps, null);
  const waiting =
    late === null
      ? []
      : [
          `step '${late.answer}' answers a sync caller after step '${late.waits}' made the run wait: a caller answered 504 past WEBHOOK_TIMEOUT_SECONDS does not get it (a wait URL's /sync variant, called when the run waits there, does)`,
        ];
  if (answers === 'always') return waiting;
  return [
    answers === 'never'
      ? 'no step answers a sync caller (a webhook return_response step, or a stop step with a response): its sync webhook answers 204 No Content when the run succeeds'
      : 'not every path through the flow reaches a step that answers a sync caller: a run that takes one answers its sync caller 204 No Content when it succeeds',
    ...waiting,
  ];
}

/** A step that makes the run wait (a delay, a wait, a sub-flow it waits for). */
function waits(step: StepDefinition): boolean {
  return step.type === 'delay' || step.type === 'wait' || (step.type === 'flow' && step.wait);
}

/**
 * The first answering step that may run after a waiting step on the same path (`before`: the
 * waiting step that may have run before these steps), with that waiting step; null when none.
 */
function answersAfterWaiting(
  steps: readonly StepDefinition[],
  before: string | null,
): { answer: string; waits: string } | null {
  let waited = before;
  for (const step of steps) {
    if (waited !== null && stepAnswers(step) !== 'never' && step.type !== 'router' && step.type !== 'loop') {
      return { answer: step.name, waits: waited };
    }
    if (step.type === 'router' || step.type === 'loop') {
      const bodies =
        step.type === 'loop'
          ? [step.steps]
          : [...step.branches.map((branch) => branch.steps), step.otherwise ?? []];
      // Each branch after what ran before the router, not after its sibling branches.
      const from = waited;
      for (const body of bodies) {
        const found = answersAfterWaiting(body, from);
        if (found !== null) return found;
        waited ??= firstWaiting(body);
      }
    } else if (waits(step)) waited ??= step.name;
  }
  return null;
}

function firstWaiting(steps: readonly StepDefinition[]): string | null {
  for (const step of steps) {
    if (waits(step)) return step.name;
    if (step.type === 'loop' || step.type === 'router') {
      const bodies =
        step.type === 'loop'
          ? [step.steps]
          : [...step.branches.map((branch) => branch.steps), step.otherwise ?? []];
      for (const body of bodies) {
        const found = firstWaiting(body);
        if (found !== null) return found;
      }
    }
  }
  return null;
}

type Answers = 'always' | 'sometimes' | 'never';

/** Whether running these steps in order surely, possibly or never reaches a response. */
function answering(steps: readonly StepDefinition[]): Answers {
  let possibly = false;
  for (const step of steps) {
    const answers = stepAnswers(step);
    if (answers === 'always') return 'always';
    // A stop ends the run: the steps after it never run.
    if (step.type === 'stop') return possibly ? 'sometimes' : 'never';
    if (answers === 'sometimes') possibly = true;
  }
  return possibly ? 'sometimes' : 'never';
}

function stepAnswers(step: StepDefinition): Answers {
  switch (step.type) {
    case 'piece':
      return step.piece === RESPONSE_STEP.piece && step.action === RESPONSE_STEP.action ? 'always' : 'never';
    case 'code':
      return 'never';
    case 'stop':
      return step.response === undefined ? 'never' : 'always';
    case 'delay':
    case 'wait':
    case 'flow':
      return 'never';
    case 'loop':
      // Its items may be empty.
      return answering(step.steps) === 'never' ? 'never' : 'sometimes';
    case 'router': {
      const bodies = [
        ...step.branches.map((branch) => branch.steps),
        ...(step.otherwise ? [step.otherwise] : []),
      ];
      const each = bodies.map(answering);
      if (each.every((answers) => answers === 'never')) return 'never';
      // Without `otherwise`, no branch may run.
      if (step.otherwise !== undefined && each.every((answers) => answers === 'always')) return 'always';
      return 'sometimes';
    }
  }
}
