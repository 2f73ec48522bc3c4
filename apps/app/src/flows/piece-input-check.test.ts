import { inputSchemaOf, Property } from '@flowbox/pieces-framework';
import type { FlowDefinition, StepDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { PieceIndex } from '../pieces/piece-registry.ts';
import type { PieceRecord } from '../pieces/pieces-repository.ts';
import { checkPieceInputs } from './piece-input-check.ts';

const SEND = inputSchemaOf('send', {
  channel: Property.ShortText({ displayName: 'Channel', required: true }),
  text: Property.LongText({ displayName: 'Text', required: true, maxLength: 20 }),
  retries: Property.Number({ displayName: 'Retries', integer: true, min: 0, max: 5 }),
  urgent: Property.Checkbox({ displayName: 'Urgent', defaultValue: false }),
  mode: Property.StaticDropdown({ displayName: 'Mode', options: ['plain', 'markdown'] }),
});

function record(actions: PieceRecord['actions']): PieceRecord {
  return {
    name: 'chat',
    version: '1.0.0',
    archiveKey: 'pieces/chat/1.0.0',
    sha256: 'a'.repeat(64),
    sizeBytes: 1,
    manifest: { name: 'chat', version: '1.0.0', entry: 'index.mjs', actions: ['send'], triggers: [] },
    nodeBuiltins: [],
    actions,
    publishedAt: new Date(0),
    yankedAt: null,
  };
}

const pieces = new PieceIndex([record([{ name: 'send', description: 'Sends', inputSchema: { ...SEND } }])]);

const send = (input: Record<string, unknown>, name = 'notify'): StepDefinition => ({
  type: 'piece',
  name,
  piece: 'chat',
  action: 'send',
  input,
});

function flow(...steps: StepDefinition[]): FlowDefinition {
  return { trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} }, steps };
}

function problem(definition: FlowDefinition, index = pieces): string | null {
  try {
    checkPieceInputs(definition, index);
    return null;
  } catch (error) {
    expect(error).toMatchObject({ code: 'INVALID_FLOW' });
    return (error as Error).message;
  }
}

describe('checkPieceInputs', () => {
  it('takes literal inputs the action accepts, with its coercions', () => {
    expect(problem(flow(send({ channel: 'general', text: 'hi', retries: '3', urgent: 'true' })))).toBeNull();
  });

  it('refuses a literal value the schema refuses, naming step and field', () => {
    expect(problem(flow(send({ channel: 'general', text: 'x'.repeat(21) })))).toMatch(
      /^definition\.steps\.0\.input\.text: /,
    );
    expect(problem(flow(send({ channel: 'general', text: 'hi', retries: 9 })))).toMatch(
      /^definition\.steps\.0\.input\.retries: /,
    );
    expect(problem(flow(send({ channel: 'general', text: 'hi', mode: 'html' })))).toMatch(
      /^definition\.steps\.0\.input\.mode: /,
    );
  });

  it('refuses a required field missing and a field the action does not have', () => {
    expect(problem(flow(send({ channel: 'general' })))).toMatch(/^definition\.steps\.0\.input\.text: /);
    expect(problem(flow(send({ channel: 'general', text: 'hi', chanel: 'x' })))).toBe(
      "definition.steps.0.input.chanel: the action has no input 'chanel'",
    );
  });

  it('leaves templated values, and the required fields they fill, to the run', () => {
    const templated = send({
      channel: '{{trigger.query.channel}}',
      text: 'from {{trigger.body.who}}',
      retries: '{{trigger.n}}',
    });
    expect(problem(flow(templated))).toBeNull();
  });

  it('checks a step wherever it sits in the tree', () => {
    const loop: StepDefinition = {
      type: 'loop',
      name: 'each',
      items: [1],
      concurrency: 1,
      steps: [
        {
          type: 'router',
          name: 'route',
          mode: 'first',
          branches: [
            { name: 'big', when: [[{ left: 1, op: 'eq', right: 1 }]], steps: [send({ channel: 'c' })] },
          ],
        },
      ],
    };
    expect(problem(flow(loop))).toMatch(
      /^definition\.steps\.0\.steps\.0\.branches\.0\.steps\.0\.input\.text: /,
    );
  });

  it('does not check a version recorded before the registry kept input schemas', () => {
    expect(problem(flow(send({})), new PieceIndex([record(null)]))).toBeNull();
  });
});
