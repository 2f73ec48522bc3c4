import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookVerify } from '@flowbox/protocol';

/** The parts of a webhook request a signature is checked on. */
export interface SignedRequest {
  /** The body's bytes as sent. */
  body: Buffer;
  /** Every value the signature header was sent with (more than one is refused). */
  headerValues: readonly string[];
}

/**
 * Why a signature was refused, for the 401's message: it names what was wrong, never what was
 * expected. Null when the signature is good.
 */
export function checkSignature(
  verify: WebhookVerify,
  secret: string,
  request: SignedRequest,
  nowSeconds: number,
): string | null {
  const [value, ...more] = request.headerValues;
  if (value === undefined) return `the ${verify.header} header is missing`;
  if (more.length > 0) return `the ${verify.header} header was sent ${request.headerValues.length} times`;
  return verify.scheme === 'hmac-sha256'
    ? checkHmac(verify, secret, value, request.body)
    : checkStripe(verify, secret, value, request.body, nowSeconds);
}

function checkHmac(
  verify: Extract<WebhookVerify, { scheme: 'hmac-sha256' }>,
  secret: string,
  value: string,
  body: Buffer,
): string | null {
  const prefix = verify.prefix ?? '';
  if (!value.startsWith(prefix)) return `the ${verify.header} header does not start with ${prefix}`;
  const expected = createHmac('sha256', secret).update(body).digest(verify.encoding);
  return same(value.slice(prefix.length), expected)
    ? null
    : `the ${verify.header} signature does not match the body`;
}

/** `t=<unix seconds>,v1=<hex>[,v1=<hex>…]` over `<t>.<body>`; any v1 may match (a rotating secret sends two). */
function checkStripe(
  verify: Extract<WebhookVerify, { scheme: 'stripe' }>,
  secret: string,
  value: string,
  body: Buffer,
  nowSeconds: number,
): string | null {
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const item = part.slice(at + 1).trim();
    if (key === 't') timestamp = item;
    else if (key === 'v1') signatures.push(item);
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp))
    return `the ${verify.header} header has no timestamp`;
  if (Math.abs(nowSeconds - Number(timestamp)) > verify.toleranceSeconds) {
    return `the ${verify.header} timestamp is more than ${verify.toleranceSeconds} s from now`;
  }
  if (signatures.length === 0) return `the ${verify.header} header has no v1 signature`;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  // Every candidate is compared, so the time taken does not say which one matched.
  let matched = false;
  for (const signature of signatures) if (same(signature, expected)) matched = true;
  return matched ? null : `no ${verify.header} v1 signature matches the body`;
}

/** Constant time for equal lengths; a length differs only when the signature is malformed. */
function same(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Every value a header was sent with, from the raw header list (node joins repeats into one). */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) values.push(rawHeaders[i + 1] ?? '');
  }
  return values;
}
