import { describe, expect, it } from 'vitest';
import { TriggerPayloadSchema } from './flow.ts';
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
      { expression: 'step_1.result', root: 'step_1', path: 'a' },
      { expression: 'trigger.body.name', root: 'trigger', path: 'b.1' },
      { expression: 'step_2', root: 'step_2', path: 'b.1' },
    ]);
  });

  it('finds nothing in plain values', () => {
    expect(findTemplateReferences({ a: 1, b: 'no braces', c: '{ single }' })).toEqual([]);
  });
});
