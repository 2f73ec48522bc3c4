import { BENCHMARK_FLOW, type FlowDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { checkErrorResponse } from './error-response-check.ts';

const withErrorResponse = (errorResponse: FlowDefinition['errorResponse']): FlowDefinition => ({
  ...BENCHMARK_FLOW,
  errorResponse,
});

function problem(errorResponse: FlowDefinition['errorResponse']): string | null {
  try {
    checkErrorResponse(withErrorResponse(errorResponse));
    return null;
  } catch (error) {
    expect(error).toMatchObject({ code: 'INVALID_FLOW' });
    return (error as Error).message;
  }
}

describe('checkErrorResponse', () => {
  it('takes templates over the run and its error', () => {
    expect(problem(undefined)).toBeNull();
    expect(
      problem({
        status: 502,
        headers: { 'x-code': '{{error.code}}' },
        body: { run: '{{run.id}}', m: 'x {{error.message}}' },
      }),
    ).toBeNull();
  });

  it('refuses a template over anything else, naming the field', () => {
    expect(problem({ status: 500, body: { who: '{{trigger.body.who}}' } })).toMatch(
      /^definition\.errorResponse\.body\.who: template \{\{trigger\.body\.who\}\} names 'trigger'/,
    );
    expect(problem({ status: 500, headers: { 'x-a': '{{step_1.result}}' } })).toMatch(
      /^definition\.errorResponse\.headers\.x-a: /,
    );
  });

  it('refuses a template that is not one, naming the field', () => {
    expect(problem({ status: 500, body: { step: '{{ error.step ?? "none" }}' } })).toBeNull();
    expect(problem({ status: 500, body: { step: '{{ error.step ?? none }}' } })).toMatch(
      /^definition\.errorResponse\.body\.step: template \{\{error\.step \?\? none\}\}: the fallback none/,
    );
  });

  it('refuses a status or literal header HTTP cannot carry', () => {
    expect(problem({ status: 101 })).toMatch(/^definition\.errorResponse\.status: status 101/);
    expect(problem({ status: 500, headers: { 'bad name': 'x' } })).toMatch(
      /^definition\.errorResponse\.headers: /,
    );
    expect(problem({ status: 500, headers: { 'x-a': 'line\nbreak' } })).toMatch(
      /^definition\.errorResponse\.headers: /,
    );
  });
});
