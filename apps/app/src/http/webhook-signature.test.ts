import { createHmac } from 'node:crypto';
import { type WebhookVerify, WebhookVerifySchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { checkSignature, headerValues } from './webhook-signature.ts';

const SECRET = 'whsec_test_secret';
const BODY = Buffer.from('{"action":"opened","n":1}');
const github: WebhookVerify = WebhookVerifySchema.parse({
  scheme: 'hmac-sha256',
  header: 'x-hub-signature-256',
  prefix: 'sha256=',
  encoding: 'hex',
  secret: '{{connections.github}}',
});
const stripe: WebhookVerify = WebhookVerifySchema.parse({
  scheme: 'stripe',
  secret: '{{connections.stripe}}',
});
const hmac = (data: string | Buffer, encoding: 'hex' | 'base64' = 'hex') =>
  createHmac('sha256', SECRET).update(data).digest(encoding);
const NOW = 1_800_000_000;

describe('checkSignature', () => {
  it('takes a GitHub-style signature of the body and refuses any other', () => {
    const good = `sha256=${hmac(BODY)}`;
    expect(checkSignature(github, SECRET, { body: BODY, headerValues: [good] }, NOW)).toBeNull();
    expect(
      checkSignature(github, SECRET, { body: Buffer.from(`${BODY} `), headerValues: [good] }, NOW),
    ).toMatch(/does not match/);
    expect(checkSignature(github, 'other', { body: BODY, headerValues: [good] }, NOW)).toMatch(
      /does not match/,
    );
    expect(checkSignature(github, SECRET, { body: BODY, headerValues: [hmac(BODY)] }, NOW)).toMatch(
      /start with/,
    );
    expect(checkSignature(github, SECRET, { body: BODY, headerValues: ['sha256=abc'] }, NOW)).toMatch(
      /does not match/,
    );
  });

  it('refuses a missing or repeated signature header', () => {
    const good = `sha256=${hmac(BODY)}`;
    expect(checkSignature(github, SECRET, { body: BODY, headerValues: [] }, NOW)).toMatch(/missing/);
    expect(checkSignature(github, SECRET, { body: BODY, headerValues: [good, good] }, NOW)).toMatch(
      /2 times/,
    );
  });

  it('takes base64 without a prefix', () => {
    const verify = WebhookVerifySchema.parse({
      scheme: 'hmac-sha256',
      header: 'x-signature',
      encoding: 'base64',
      secret: '{{connections.s}}',
    });
    expect(
      checkSignature(verify, SECRET, { body: BODY, headerValues: [hmac(BODY, 'base64')] }, NOW),
    ).toBeNull();
  });

  it('takes a Stripe-style signature within the tolerance, any of several v1s, and refuses a stale one', () => {
    const t = NOW - 10;
    const v1 = hmac(`${t}.${BODY}`);
    const header = (time: number, ...signatures: string[]) =>
      [`t=${time}`, ...signatures.map((s) => `v1=${s}`), 'v0=ignored'].join(',');
    expect(checkSignature(stripe, SECRET, { body: BODY, headerValues: [header(t, v1)] }, NOW)).toBeNull();
    expect(
      checkSignature(stripe, SECRET, { body: BODY, headerValues: [header(t, 'f'.repeat(64), v1)] }, NOW),
    ).toBeNull();
    expect(
      checkSignature(stripe, SECRET, { body: Buffer.from('{}'), headerValues: [header(t, v1)] }, NOW),
    ).toMatch(/no stripe-signature v1 signature matches/);
    expect(checkSignature(stripe, SECRET, { body: BODY, headerValues: [header(t + 1, v1)] }, NOW)).toMatch(
      /matches/,
    );
    const old = NOW - 301;
    expect(
      checkSignature(
        stripe,
        SECRET,
        { body: BODY, headerValues: [header(old, hmac(`${old}.${BODY}`))] },
        NOW,
      ),
    ).toMatch(/300 s/);
    expect(checkSignature(stripe, SECRET, { body: BODY, headerValues: [`v1=${v1}`] }, NOW)).toMatch(
      /timestamp/,
    );
  });
});

describe('headerValues', () => {
  it('lists every value a header was sent with, whatever its case', () => {
    expect(headerValues(['X-Sig', 'a', 'Host', 'h', 'x-sig', 'b'], 'x-sig')).toEqual(['a', 'b']);
  });
});
