import { describe, expect, it } from 'vitest';
import { createTrigger, type PollingTriggerDefinition } from './trigger.ts';

const polling = (dedupe: unknown): PollingTriggerDefinition =>
  ({
    name: 'new_rows',
    description: 'rows',
    strategy: 'polling',
    dedupe,
    poll: () => ({ items: [] }),
  }) as PollingTriggerDefinition;

describe('createTrigger', () => {
  it('makes a polling trigger whose output is the item it was started with', async () => {
    const trigger = createTrigger(polling({ by: 'id', field: 'id' }));
    expect(trigger.strategy).toBe('polling');
    const payload = { method: 'POST', headers: {}, query: {}, body: { id: 7 }, rawBody: null } as const;
    expect(
      await trigger.execute(
        { ...payload, rawBodyEncoding: 'utf8' },
        { runId: 'r', stepName: 't', log: () => {} },
      ),
    ).toEqual({
      id: 7,
    });
    expect(
      await trigger.polling?.poll(
        {
          flowId: 'f',
          input: {},
          fetch: async () => ({ status: 200, headers: {}, body: '', url: '' }),
          log: () => {},
        },
        { state: null },
      ),
    ).toEqual({ items: [] });
  });

  it('refuses a polling trigger without a dedupe key, naming it', () => {
    for (const dedupe of [undefined, { by: 'id' }, { by: 'id', field: '' }, { by: 'hash', field: 'id' }]) {
      expect(() => createTrigger(polling(dedupe))).toThrow(/polling trigger new_rows needs dedupe/);
    }
  });
});
