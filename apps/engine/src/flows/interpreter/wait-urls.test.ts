import { createHmac } from 'node:crypto';
import type { StepDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { holdsWaits, waitToken, waitUrlsIn } from './wait-urls.ts';

const run = { runId: 'run-1', urls: { baseUrl: 'https://x.example/', key: 'k'.repeat(32) } };
const wait = (name: string): StepDefinition => ({ type: 'wait', name, kind: 'request' });

describe('wait URLs', () => {
  it('the token is base64url(HMAC-SHA256(key, path))', () => {
    const expected = createHmac('sha256', run.urls.key).update('each[2]/ok').digest('base64url');
    expect(waitToken(run.urls.key, 'each[2]/ok')).toBe(expected);
    expect(waitToken(run.urls.key, 'each[1]/ok')).not.toBe(expected);
  });

  it("a frame's waits: its own and its routers' branches', not its loops'", () => {
    const steps: StepDefinition[] = [
      wait('top'),
      {
        type: 'router',
        name: 'route',
        mode: 'first',
        branches: [{ name: 'b', when: [], steps: [wait('inner')] }],
        otherwise: [wait('other')],
      },
      { type: 'loop', name: 'each', items: [], concurrency: 1, steps: [wait('looped')] },
    ];
    const urls = waitUrlsIn(steps, '', run);
    expect(Object.keys(urls)).toEqual(['top', 'inner', 'other']);
    expect(urls.inner?.resumeUrl).toBe(
      `https://x.example/v1/waits/run-1/${encodeURIComponent('route/b/inner')}/${waitToken(run.urls.key, 'route/b/inner')}`,
    );
    expect(holdsWaits(steps)).toBe(true);
    expect(holdsWaits([steps[2] as StepDefinition])).toBe(false);
  });
});
