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

  it('reads a path that does not exist as undefined: a field left out, empty text', () => {
    expect(resolveTemplates('{{step_9.result}}', scope)).toBeUndefined();
    expect(resolveTemplates({ a: '{{step_1.value}}', b: 1 }, scope)).toStrictEqual({ b: 1 });
    expect(resolveTemplates(['{{trigger.nested.n.m}}', 2], scope)).toStrictEqual([undefined, 2]);
    expect(resolveTemplates('x={{step_1.value}};', scope)).toBe('x=;');
    expect(resolveTemplates('{{trigger.name.length}}', scope)).toBeUndefined();
  });

  it('does not reach prototype properties', () => {
    expect(resolveTemplates('{{step_1.constructor}}', scope)).toBeUndefined();
    expect(resolveTemplates('{{toString}}', scope)).toBeUndefined();
    expect(resolveTemplates('{{trigger.tags.__proto__}}', scope)).toBeUndefined();
  });

  it('keeps a __proto__ field of the input a field', () => {
    const resolved = resolveTemplates(JSON.parse('{"__proto__": "{{step_1.result}}"}'), scope) as object;
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(Object.hasOwn(resolved, '__proto__')).toBe(true);
  });

  describe('a fallback after ??', () => {
    it('applies when the path is undefined or null', () => {
      expect(resolveTemplates('{{ step_1.value ?? "none" }}', scope)).toBe('none');
      expect(resolveTemplates('{{step_3 ?? 7}}', scope)).toBe(7);
      expect(resolveTemplates("{{ trigger.missing ?? 'a b' }}", scope)).toBe('a b');
      expect(resolveTemplates('{{ step_9.x ?? false }}', scope)).toBe(false);
      expect(resolveTemplates('{{ step_9.x ?? null }}', scope)).toBeNull();
      expect(resolveTemplates('{{ step_9.x ?? -2.5e1 }}', scope)).toBe(-25);
      expect(resolveTemplates('{{ step_9.x ?? "say \\"hi\\"" }}', scope)).toBe('say "hi"');
      expect(resolveTemplates({ channel: '{{trigger.channel ?? "general"}}' }, scope)).toEqual({
        channel: 'general',
      });
      expect(resolveTemplates('#{{ trigger.channel ?? "general" }}!', scope)).toBe('#general!');
    });

    it('does not apply to a value that is there, falsy or not', () => {
      expect(resolveTemplates('{{ step_1.result ?? 0 }}', scope)).toBe(5);
      expect(resolveTemplates('{{ trigger.tags.0 ?? "z" }}', scope)).toBe('x');
      expect(resolveTemplates('{{ f ?? 1 }}', { f: 0 })).toBe(0);
      expect(resolveTemplates('{{ f ?? 1 }}', { f: '' })).toBe('');
      expect(resolveTemplates('{{ f ?? true }}', { f: false })).toBe(false);
    });

    it('refuses a fallback that is not a literal, naming the step, field and template', () => {
      for (const bad of ['step_2', '"open', "'it's'", '0x10', 'Infinity', '']) {
        const input = { body: { items: [`{{ step_9 ?? ${bad} }}`] } };
        const message = templateError(() => resolveTemplates(input, scope, 'step_4'));
        expect(message).toMatch(/^step 'step_4', input\.body\.items\.0: template \{\{step_9 \?\?/);
        expect(message).toMatch(/is not a string|nothing/);
      }
    });
  });

  it('names the step, the field and the template of an invalid expression', () => {
    expect(templateError(() => resolveTemplates('{{}}', scope))).toBe(
      'input: template {{}}: the template is empty',
    );
    expect(templateError(() => resolveTemplates({ a: ['x {{step_1..result}}'] }, scope, 'step_2'))).toBe(
      "step 'step_2', input.a.0: template {{step_1..result}}: the path 'step_1..result' has an empty segment",
    );
  });

  it('refuses a connection the run was not given, and reads a missing field of one as undefined', () => {
    const withSecrets = { ...scope, connections: { api: { token: 't' } } };
    expect(resolveTemplates('Bearer {{connections.api.token}}', withSecrets)).toBe('Bearer t');
    expect(resolveTemplates('{{connections.api.other ?? "none"}}', withSecrets)).toBe('none');
    expect(templateError(() => resolveTemplates({ h: '{{connections.slack}}' }, withSecrets, 's'))).toBe(
      "step 's', input.h: template {{connections.slack}}: the run has no connection 'slack'",
    );
    expect(templateError(() => resolveTemplates('{{connections.api}}', scope))).toMatch(
      /no connection 'api'/,
    );
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

    it('reads a missing query parameter as undefined, so a fallback or a default applies', () => {
      expect(resolveTemplates('{{trigger.nope}}', withRequest)).toBeUndefined();
      expect(resolveTemplates({ channel: '{{trigger.query.channel}}' }, withRequest)).toStrictEqual({});
      expect(resolveTemplates('{{trigger.query.channel ?? "general"}}', withRequest)).toBe('general');
    });

    it('leaves an older trigger output (the body alone) as it is', () => {
      expect(resolveTemplates('{{trigger.headers}}', { trigger: { headers: 'field' } })).toBe('field');
    });
  });
});
