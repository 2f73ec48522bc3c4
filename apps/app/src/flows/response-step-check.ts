import { findTemplateReferences, responseHeaderProblem, responseStatusProblem } from '@flowbox/protocol';

/** The webhook piece's response step, whose literal status and headers are checked at publish. */
export const RESPONSE_STEP = { piece: 'webhook', action: 'return_response' } as const;

/**
 * Why a response step's input, as written, could never be sent (`at` names the step), or null.
 * Only what holds no template is judged: a templated status or header is checked when the run
 * builds it (the step fails INVALID_RESPONSE). Restricted headers are left to the run, since
 * WEBHOOK_RESPONSE_ALLOWED_HEADERS may change after publishing.
 */
export function literalResponseProblem(input: Record<string, unknown>, at: string): string | null {
  const status = input.status;
  const literal = (value: unknown) => findTemplateReferences(value).length === 0;
  if ((typeof status === 'number' || typeof status === 'string') && literal(status)) {
    const code = Number(status);
    const problem = responseStatusProblem(code);
    if (problem !== null) return `${at}.input.status: ${problem}`;
  }
  const headers = input.headers;
  if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string' || !literal(value)) continue;
      const problem = responseHeaderProblem(name, value);
      if (problem !== null) return `${at}.input.headers: ${problem}`;
    }
  }
  return null;
}
