import { FlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { toFlowboxError } from './error-handler.ts';

function fastifyError(code: string, statusCode: number, message = 'x'): Error {
  return Object.assign(new Error(message), { code, statusCode });
}

describe('toFlowboxError', () => {
  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'BODY_TOO_LARGE'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'INVALID_BODY'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'INVALID_BODY'],
  ])('maps %s to %s', (code, status, expected) => {
    const mapped = toFlowboxError(fastifyError(code, status));
    expect(mapped.code).toBe(expected);
    expect(mapped.httpStatus).toBe(status);
  });

  it('maps a JSON syntax error to INVALID_BODY', () => {
    expect(toFlowboxError(new SyntaxError('Unexpected token')).code).toBe('INVALID_BODY');
  });

  it('keeps flowbox errors and hides unknown ones behind INTERNAL', () => {
    const own = new FlowboxError('FLOW_NOT_FOUND', 'nope');
    expect(toFlowboxError(own)).toBe(own);
    const unknown = toFlowboxError(new Error('database password is hunter2'));
    expect(unknown.code).toBe('INTERNAL');
    expect(unknown.message).toBe('internal error');
  });
});
