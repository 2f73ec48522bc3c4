import { isFlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { resolveTemplates } from './template.ts';

const scope = {
  trigger: { name: 'ada', tags: ['x', 'y'], nested: { n: 1 } },
  step_1: { result: 5 },
  step_2: { result: 6 },
  step_3: null,
};

function templateError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isFlowboxError(error) && error.code === 'TEMPLATE_ERROR') return error.message;
    throw error;
  }
  throw new Error('expected a TEMPLATE_ERROR');
}

describe('resolveTemplates', () => {
  it('keeps the type of a value referenced by a whole-string template', () => {
    expect(resolveTemplates('{{step_1.result}}', scope)).toBe(5);
    expect(resolveTemplates('{{ step_2 }}', scope)).toEqual({ result: 6 });
    expect(resolveTemplates('{{trigger.tags}}', scope)).toEqual(['x', 'y']);
    expect(resolveTemplates('{{step_3}}', scope)).toBeNull();
  });

  it('interpolates templates inside longer strings as text', () => {
    expect(resolveTemplates('sum={{step_1.result}}!', scope)).toBe('sum=5!');
    expect(resolveTemplates('{{trigger.name}}-{{step_2}}', scope)).toBe('ada-{"result":6}');
    expect(resolveTemplates('n: {{step_3}}', scope)).toBe('n: null');
  });

  it('resolves through objects and arrays and leaves other values alone', () => {
    const input = { a: '{{step_1.result}}', list: ['{{trigger.tags.1}}', 3, true], deep: { b: null } };
    expect(resolveTemplates(input, scope)).toEqual({ a: 5, list: ['y', 3, true], deep: { b: null } });
  });

  it('leaves strings without templates unchanged', () => {
    expect(resolveTemplates('plain {text}', scope)).toBe('plain {text}');
    expect(resolveTemplates('{{ open', scope)).toBe('{{ open');
    expect(resolveTemplates('{{step_1}', scope)).toBe('{{step_1}');
    expect(resolveTemplates('{{step_1 {x} }}', scope)).toBe('{{step_1 {x} }}');
  });

  it('reads a template between other braces as text', () => {
    expect(resolveTemplates('{{{step_1.result}}', scope)).toBe('{5');
    expect(resolveTemplates('{{step_1.result}}}', scope)).toBe('5}');
    expect(resolveTemplates('{{{step_1.result}}}', scope)).toBe('{5}');
    expect(resolveTemplates('{{ step_1.result }}{{step_2.result}}', scope)).toBe('56');
    expect(resolveTemplates('{{ {{step_1.result}}', scope)).toBe('{{ 5');
  });

  it('trims whitespace of any kind around the expression', () => {
    expect(resolveTemplates('{{\n\tstep_1.result\u00a0}}', scope)).toBe(5);
    expect(resolveTemplates('[{{ step_1.result\r\n}}]', scope)).toBe('[5]');
  });

  it('names an unknown step', () => {
    expect(templateError(() => resolveTemplates('{{step_9.result}}', scope))).toMatch(
      /unknown step 'step_9'/,
    );
  });

  it('names a missing path', () => {
    expect(templateError(() => resolveTemplates('x {{step_1.value}}', scope))).toMatch(
      /'step_1' has no property 'value'/,
    );
    expect(templateError(() => resolveTemplates('{{trigger.nested.n.m}}', scope))).toMatch(
      /'trigger.nested.n' has no property 'm'/,
    );
  });

  it('does not reach prototype properties', () => {
    expect(templateError(() => resolveTemplates('{{step_1.constructor}}', scope))).toMatch(/constructor/);
    expect(templateError(() => resolveTemplates('{{toString}}', scope))).toMatch(/unknown step/);
  });

  it('rejects an empty template', () => {
    expect(templateError(() => resolveTemplates('{{}}', scope))).toMatch(/invalid template/);
  });

  describe('on the webhook request the trigger outputs', () => {
    const request = {
      method: 'POST',
      headers: { 'x-signature': 'sha256=ab' },
      query: { page: '2', tag: ['a', 'b'] },
      body: { who: 'ada', headers: 'a body field', nested: { n: 1 } },
      rawBody: '{"who":"ada"}',
      rawBodyEncoding: 'utf8',
    };
    const withRequest = { trigger: request, step_1: { result: 5 } };

    it('reads the request parts by name', () => {
      expect(resolveTemplates('{{trigger.method}}', withRequest)).toBe('POST');
      expect(resolveTemplates('{{trigger.headers.x-signature}}', withRequest)).toBe('sha256=ab');
      expect(resolveTemplates('{{trigger.query.tag}}', withRequest)).toEqual(['a', 'b']);
      expect(resolveTemplates('{{trigger.rawBody}}', withRequest)).toBe('{"who":"ada"}');
      expect(resolveTemplates('{{trigger.body.nested.n}}', withRequest)).toBe(1);
    });

    it('reads any other name, and the trigger alone, as the body, as before', () => {
      expect(resolveTemplates('{{trigger.who}}', withRequest)).toBe('ada');
      expect(resolveTemplates('hi {{trigger.nested.n}}', withRequest)).toBe('hi 1');
      expect(resolveTemplates('{{trigger}}', withRequest)).toEqual(request.body);
    });

    it('gives a part its request meaning: a body field of that name is under body', () => {
      expect(resolveTemplates('{{trigger.headers}}', withRequest)).toEqual(request.headers);
      expect(resolveTemplates('{{trigger.body.headers}}', withRequest)).toBe('a body field');
    });

    it('names the body when a field is missing', () => {
      expect(templateError(() => resolveTemplates('{{trigger.nope}}', withRequest))).toMatch(
        "'trigger.body' has no property 'nope'",
      );
    });

    it('leaves an older trigger output (the body alone) as it is', () => {
      expect(resolveTemplates('{{trigger.headers}}', { trigger: { headers: 'field' } })).toBe('field');
    });
  });
});
