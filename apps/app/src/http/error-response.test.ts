import { describe, expect, it } from 'vitest';
import { errorResponseScope, renderErrorResponse } from './error-response.ts';

const scope = errorResponseScope(
  { id: 'run-1', flowId: 'orders', status: 'FAILED' },
  {
    name: 'FlowboxError',
    code: 'CODE_STEP_FAILED',
    message: 'boom',
    step: 'charge',
    stack: 'at secret.ts:1',
  },
);

describe('renderErrorResponse', () => {
  it('gives a lone template its value with its type and interpolates templates in text', () => {
    const response = renderErrorResponse(
      {
        status: 502,
        headers: { 'x-code': '{{error.code}}', 'x-run': 'run {{ run.id }}' },
        body: { code: '{{error.code}}', where: '{{error.step}} of {{run.flowId}}', error: '{{error}}', n: 1 },
      },
      scope,
    );
    expect(response).toEqual({
      status: 502,
      headers: { 'x-code': 'CODE_STEP_FAILED', 'x-run': 'run run-1' },
      body: {
        code: 'CODE_STEP_FAILED',
        where: 'charge of orders',
        error: { code: 'CODE_STEP_FAILED', message: 'boom', step: 'charge' },
        n: 1,
      },
    });
  });

  it('never shows the stack, and a path it does not hold gives nothing', () => {
    const response = renderErrorResponse(
      {
        status: 500,
        headers: { 'x-step': '{{error.nothing}}' },
        body: ['{{error.stack}}', 'at {{error.constructor}}.', '{{run.id.length}}'],
      },
      scope,
    );
    expect(response.headers).toEqual({ 'x-step': '' });
    expect(response.body).toEqual([undefined, 'at .', undefined]);
  });

  it('answers a failure outside any step with no step', () => {
    const noStep = errorResponseScope(
      { id: 'r', flowId: 'f', status: 'TIMED_OUT' },
      { name: 'FlowboxError', code: 'FLOW_TIMEOUT', message: 'late' },
    );
    expect(renderErrorResponse({ status: 503, body: '{{error.code}}/{{error.step}}' }, noStep).body).toBe(
      'FLOW_TIMEOUT/',
    );
  });

  it('reads a `?? literal` fallback when the path gives nothing, as a step input does', () => {
    const noStep = errorResponseScope(
      { id: 'r', flowId: 'f', status: 'TIMED_OUT' },
      { name: 'FlowboxError', code: 'FLOW_TIMEOUT', message: 'late' },
    );
    const template = {
      status: 503,
      body: { step: '{{ error.step ?? "none" }}', text: "in {{error.step ?? 'the flow'}}" },
    };
    expect(renderErrorResponse(template, noStep).body).toEqual({ step: 'none', text: 'in the flow' });
    expect(renderErrorResponse(template, scope).body).toEqual({ step: 'charge', text: 'in charge' });
  });
});
