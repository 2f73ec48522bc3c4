import { describe, expect, it } from 'vitest';
import { flowResponseProblem, responseHeaderProblem, responseStatusProblem } from './response-rules.ts';

describe('response rules', () => {
  it('accepts final statuses only', () => {
    for (const status of [200, 204, 302, 404, 599]) expect(responseStatusProblem(status)).toBeNull();
    for (const status of [100, 101, 103, 199, 600, 0, -1, 200.5, Number.NaN]) {
      expect(responseStatusProblem(status)).toMatch(/is not a final HTTP status \(200–599\)/);
    }
  });

  it('accepts token names and printable values', () => {
    expect(responseHeaderProblem('x-custom_1.2!', 'a value\twith tab, é and ~')).toBeNull();
    expect(responseHeaderProblem('content-type', '')).toBeNull();
  });

  it('refuses control characters in values and non-token names, naming the header only', () => {
    expect(responseHeaderProblem('x-a', 'a\r\nset-cookie: x=1')).toBe(
      'header "x-a" has a value with a character HTTP cannot carry (CR, LF, NUL, another control character, or one past Latin-1)',
    );
    expect(responseHeaderProblem('x-a', 'a\n')).toMatch(/HTTP cannot carry/);
    expect(responseHeaderProblem('x-a', 'a\u0000')).toMatch(/HTTP cannot carry/);
    expect(responseHeaderProblem('x-a', 'snowman ☃')).toMatch(/HTTP cannot carry/);
    for (const name of ['', 'a b', 'a:b', 'x\r\ny', 'ümlaut', '(x)']) {
      expect(responseHeaderProblem(name, 'v')).toBe(
        `header name ${JSON.stringify(name)} is not a valid HTTP header name`,
      );
    }
  });

  it('reports the first problem of a whole response', () => {
    expect(flowResponseProblem({ status: 200, headers: { a: 'b' } })).toBeNull();
    expect(flowResponseProblem({ status: 101, headers: { 'a b': 'c' } })).toMatch(/status 101/);
    expect(flowResponseProblem({ status: 200, headers: { ok: 'x', 'a b': 'c' } })).toMatch(/"a b"/);
  });
});
