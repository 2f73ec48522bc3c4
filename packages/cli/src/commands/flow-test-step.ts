import type { components } from '../api/api-types.ts';
import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';
import type { RunPayload } from './flow-run.ts';

export type StepTestResult = components['schemas']['StepTestResult'];

/** Runs one step on a worker over the sample data (`POST /v1/flows/:flowId/steps/:stepName/test`). */
export async function testStep(
  api: ApiClient,
  flowId: string,
  stepName: string,
  data: RunPayload,
  version: string | undefined,
): Promise<StepTestResult> {
  const { data: answer } = await unwrap(
    api.POST('/v1/flows/{flowId}/steps/{stepName}/test', {
      params: { path: { flowId, stepName } },
      body: { data, ...(version === undefined ? {} : { version }) },
    }),
    `test step ${stepName} of flow ${flowId}`,
  );
  return answer;
}

/**
 * The step's console lines (to stderr, `<level>: <message>`), then its output as JSON (stdout);
 * a FAILED step throws its error, so the command exits 1 with its code.
 */
export function reportStepTest(
  io: { out(text: string): void; err(text: string): void },
  stepName: string,
  answer: StepTestResult,
): void {
  for (const line of answer.logs ?? []) io.err(`${line.level}: ${line.message}\n`);
  if (answer.status === 'FAILED') {
    const error = answer.error ?? { code: 'STEP_FAILED', message: 'the step failed' };
    throw new CliError(error.code, `step ${stepName} failed: ${error.message}`);
  }
  io.out(`${answer.output === undefined ? 'null' : JSON.stringify(answer.output, null, 2)}\n`);
}
