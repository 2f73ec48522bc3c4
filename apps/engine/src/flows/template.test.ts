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
});
