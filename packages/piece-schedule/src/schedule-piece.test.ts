import type { TriggerPayload } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { schedulePiece } from './index.ts';

const payload = (body: TriggerPayload['body']): TriggerPayload => ({
  method: 'POST',
  headers: {},
  query: {},
  body,
  rawBody: null,
  rawBodyEncoding: 'utf8',
});
const ctx = { runId: 'run-1', stepName: 'trigger', log: () => {} };

describe('schedule piece', () => {
  it('outputs the tick the app fired', async () => {
    const tick = { scheduledAt: '2026-11-29T09:00:00.000Z', firedAt: '2026-11-29T09:00:00.120Z' };
    for (const name of ['cron', 'every']) {
      const trigger = schedulePiece.triggers.get(name);
      expect(await trigger?.execute(payload(tick), ctx)).toEqual(tick);
    }
  });

  it('outputs the moment it ran when a manual run sends no tick', async () => {
    const output = (await schedulePiece.triggers.get('every')?.execute(payload({ x: 1 }), ctx)) as {
      scheduledAt: string;
      firedAt: string;
    };
    expect(Number.isNaN(Date.parse(output.firedAt))).toBe(false);
    expect(output.scheduledAt).toBe(output.firedAt);
    // The payload's own fields read as {{trigger.x}}.
    expect(output).toMatchObject({ x: 1 });
  });
});
