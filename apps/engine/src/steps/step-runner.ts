import type { LeafStepDefinition, StepResult } from '@flowbox/protocol';
import type { TemplateScope } from './template.ts';

/**
 * Runs one step of one run and records it; a failing step is a result, never a throw. The flow
 * executor drives one; the engine's realm (`flows/host-step-runner.ts`: `shared` and `process`)
 * and a run's isolate (`isolate/isolate-step-runner.ts`) each implement it.
 */
export interface StepRunner {
  runTrigger(): Promise<StepResult>;
  runStep(step: LeafStepDefinition, scope: TemplateScope): Promise<StepResult>;
}
