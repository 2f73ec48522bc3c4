import {
  ERROR_RESPONSE_ROOTS,
  FlowboxError,
  type FlowDefinition,
  findTemplateReferences,
  responseHeaderProblem,
  responseStatusProblem,
} from '@flowbox/protocol';

const ROOTS: ReadonlySet<string> = new Set(ERROR_RESPONSE_ROOTS);
const AT = 'definition.errorResponse';

/**
 * Refuses (INVALID_FLOW naming the field) an `errorResponse` that could never be sent as
 * written: a status or a literal header HTTP cannot carry, or a template that reads anything but
 * the run's `error` and `run`. Restricted headers are judged when it is sent, as a response
 * step's are (WEBHOOK_RESPONSE_ALLOWED_HEADERS may change after publishing).
 */
export function checkErrorResponse(definition: FlowDefinition): void {
  const response = definition.errorResponse;
  if (response === undefined) return;
  const status = responseStatusProblem(response.status);
  if (status !== null) throw invalid(`${AT}.status: ${status}`);
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    const literal = findTemplateReferences(value).length === 0 ? value : '';
    const problem = responseHeaderProblem(name, literal);
    if (problem !== null) throw invalid(`${AT}.headers: ${problem}`);
  }
  const references = [
    ...findTemplateReferences(response.headers ?? {}, 'headers'),
    ...findTemplateReferences(response.body, 'body'),
  ];
  for (const reference of references) {
    if (reference.problem !== undefined) {
      throw invalid(`${AT}.${reference.path}: template {{${reference.expression}}}: ${reference.problem}`);
    }
    if (!ROOTS.has(reference.root)) {
      throw invalid(
        `${AT}.${reference.path}: template {{${reference.expression}}} names '${reference.root}'; an errorResponse reads only {{error.code}}, {{error.message}}, {{error.step}} and {{run.id}}, {{run.status}}, {{run.flowId}}`,
      );
    }
  }
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_FLOW', message);
}
