import { describe, expect, it } from 'vitest';
import { TriggerPayloadSchema } from './flow.ts';
import { parseTemplateExpression } from './template-expression.ts';
import { findTemplateReferences, TRIGGER_REQUEST_PARTS } from './templates.ts';

describe('TRIGGER_REQUEST_PARTS', () => {
  it("are the trigger payload schema's fields", () => {
    expect([...TRIGGER_REQUEST_PARTS].sort()).toEqual(Object.keys(TriggerPayloadSchema.shape).sort());
  });
});

describe('findTemplateReferences', () => {
  it('finds whole and embedded templates through arrays and objects, with their place', () => {
    const input = {
      a: '{{step_1.result}}',
      b: ['x', 'hello {{ trigger.body.name }} and {{step_2}}'],
      c: { d: 5, e: null },
    };
    expect(findTemplateReferences(input)).toEqual([
      { expression: 'step_1.result', root: 'step_1', segments: ['step_1', 'result'], path: 'a' },
      {
        expression: 'trigger.body.name',
        root: 'trigger',
        segments: ['trigger', 'body', 'name'],
        path: 'b.1',
      },
      { expression: 'step_2', root: 'step_2', segments: ['step_2'], path: 'b.1' },
    ]);
  });

  it('finds nothing in plain values', () => {
    expect(findTemplateReferences({ a: 1, b: 'no braces', c: '{ single }' })).toEqual([]);
  });

  it('gives the root of a template with a fallback, and the fallback', () => {
    expect(findTemplateReferences({ c: '#{{ trigger.query.channel ?? "general" }}' })).toEqual([
      {
        expression: 'trigger.query.channel ?? "general"',
        root: 'trigger',
        segments: ['trigger', 'query', 'channel'],
        path: 'c',
        fallback: { value: 'general' },
      },
    ]);
    expect(findTemplateReferences('{{connections.api.token ?? null}}')[0]).toMatchObject({
      root: 'connections',
      segments: ['connections', 'api', 'token'],
      fallback: { value: null },
    });
  });

  it('says why an expression is not one the engine resolves', () => {
    expect(findTemplateReferences({ a: '{{ step_1 ?? step_2 }}' })[0]).toMatchObject({
      root: 'step_1',
      path: 'a',
      problem: expect.stringMatching(/fallback step_2 is not a string/),
    });
    expect(findTemplateReferences('{{a..b}}')[0]?.problem).toMatch(/empty segment/);
    expect(findTemplateReferences('{{ }}')[0]?.problem).toMatch(/empty/);
  });
});

describe('parseTemplateExpression', () => {
  it('reads a path and a literal fallback', () => {
    expect(parseTemplateExpression('a.b.0')).toEqual({ path: 'a.b.0', segments: ['a', 'b', '0'] });
    const fallbacks: [string, unknown][] = [
      ['"x"', 'x'],
      ["'x y'", 'x y'],
      ['""', ''],
      ['12', 12],
      ['-0.5', -0.5],
      ['1e3', 1000],
      ['true', true],
      ['false', false],
      ['null', null],
      ['"a ?? b"', 'a ?? b'],
    ];
    for (const [literal, value] of fallbacks) {
      expect(parseTemplateExpression(`a.b ?? ${literal}`)).toEqual({
        path: 'a.b',
        segments: ['a', 'b'],
        fallback: { value },
      });
    }
  });

  it('refuses what is not a literal', () => {
    for (const literal of ['x', '+1', '01', '.5', 'NaN', "'", '"x" ?? "y"', 'a.b']) {
      expect(parseTemplateExpression(`a ?? ${literal}`)).toEqual(expect.stringMatching(/is not a string/));
    }
  });
});
