import { createHmac } from 'node:crypto';
import { waitStepUrls } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { waitUrlKey } from '../queue/durable-dispatch.ts';
import { isWaitToken, waitToken } from './wait-token.ts';

const SECRET = 'a-wait-url-secret-of-32-characters!!';
const RUN = '6f1d1b2e-64a4-4c2b-9f0e-1d2c3b4a5f60';

describe('wait tokens', () => {
  it('derives the key and token as durable.ts says: base64url HMAC-SHA256 twice', () => {
    const key = createHmac('sha256', SECRET).update(RUN).digest('base64url');
    expect(waitUrlKey(SECRET, RUN)).toBe(key);
    expect(waitToken(key, 'approval')).toBe(createHmac('sha256', key).update('approval').digest('base64url'));
  });

  it("accepts the token the engine writes into a wait's URLs", () => {
    const token = waitToken(waitUrlKey(SECRET, RUN), 'each[2]/approval');
    const urls = waitStepUrls('https://flows.example.com/', RUN, 'each[2]/approval', token);
    expect(urls.approveUrl).toBe(
      `https://flows.example.com/v1/waits/${RUN}/each%5B2%5D%2Fapproval/${token}/approve`,
    );
    expect(isWaitToken(SECRET, RUN, 'each[2]/approval', token)).toBe(true);
  });

  it("refuses another path's, another run's, another secret's and a truncated token", () => {
    const token = waitToken(waitUrlKey(SECRET, RUN), 'approval');
    expect(isWaitToken(SECRET, RUN, 'other', token)).toBe(false);
    expect(isWaitToken(SECRET, '00000000-0000-4000-8000-000000000000', 'approval', token)).toBe(false);
    expect(isWaitToken(`${SECRET}x`, RUN, 'approval', token)).toBe(false);
    expect(isWaitToken(SECRET, RUN, 'approval', token.slice(1))).toBe(false);
    expect(isWaitToken(SECRET, RUN, 'approval', '')).toBe(false);
  });
});
