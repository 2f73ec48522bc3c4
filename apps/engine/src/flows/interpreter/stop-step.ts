import {
  FlowboxError,
  type FlowResponse,
  flowResponseProblem,
  type StopStepDefinition,
  stepPath,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { containerResult, endStep, failStep, type RunContext } from './interpreter-context.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * `stop`: answers a sync caller with its `response` (through the run's respond path, as the
 * webhook's return_response action does), then ends the run: SUCCEEDED, or FAILED with its
 * `message` under FLOW_STOPPED. Steps running in parallel bodies stop before their next step.
 */
export async function runStop(
  context: RunContext,
  step: StopStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, false);
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const written = { status: step.status, message: step.message, response: step.response };
  const result = containerResult(step.name, path, 'stop', startedAt, started, written);
  try {
    const input = resolveTemplates(written, frame, step.name, '') as typeof written;
    result.input = input;
    if (input.response !== undefined) await context.respond(responseOf(input.response));
  } catch (error) {
    failStep(context, path, record, result, started, error);
    return false;
  }
  result.output = { status: step.status };
  const message = typeof result.input === 'object' ? (result.input as typeof written).message : undefined;
  context.ending ??= {
    ending:
      step.status === 'FAILED'
        ? {
            kind: 'stopped',
            error: {
              name: 'FlowboxError',
              code: 'FLOW_STOPPED',
              message: message ?? `the flow stopped at ${path}`,
              step: step.name,
            },
          }
        : { kind: 'stopped' },
    path,
  };
  endStep(record, result, started);
  return false;
}

function responseOf(response: NonNullable<StopStepDefinition['response']>): FlowResponse {
  const answer: FlowResponse = {
    status: response.status,
    headers: response.headers ?? {},
    body: response.body,
  };
  const problem = flowResponseProblem(answer);
  if (problem !== null) throw new FlowboxError('INVALID_RESPONSE', `the response cannot be sent: ${problem}`);
  return answer;
}
