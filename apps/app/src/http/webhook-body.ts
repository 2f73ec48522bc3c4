import { FlowboxError, type TriggerPayload } from '@flowbox/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { inspectJson, parseJsonBody } from './json-body.ts';

/** A webhook body as its parser leaves it on `request.body`. */
export type WebhookBody = Pick<TriggerPayload, 'body' | 'rawBody' | 'rawBodyEncoding'>;

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
const TEXT_TYPE = /^text\/[\w.+-]+\s*(;|$)/i;

/**
 * What the parser leaves on `request.body`: the flow's view of the body, and the bytes as sent,
 * which a sender's signature is checked on (text that is not UTF-8 decodes with U+FFFD, so its
 * text is not the bytes that were signed).
 */
export type ReceivedWebhookBody = WebhookBody & { bytes: Buffer };

/** What a request without a body (a GET, an empty POST) hands the flow. */
export const NO_BODY: Readonly<WebhookBody> = Object.freeze({
  body: {},
  rawBody: '',
  rawBodyEncoding: 'utf8',
});

/**
 * The webhook routes' one body parser, for every content type (fastify's own would answer 415 to
 * anything but JSON): JSON (an object), a form, `text/*`, and any other type kept as bytes, all
 * within the server's bodyLimit (WEBHOOK_BODY_LIMIT_BYTES). The bytes are read once and kept
 * for the signature check; the text decoded from them (or their base64) is the copy the run keeps
 * as `rawBody`; `body` is what parsing it gives.
 */
export function installWebhookBodyParser(scope: FastifyInstance, maxDepth: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (request, raw, done) => {
    try {
      const bytes = raw as Buffer;
      const received: ReceivedWebhookBody = {
        ...parseWebhookBody(request.headers['content-type'] ?? '', bytes, maxDepth),
        bytes,
      };
      done(null, received);
    } catch (error) {
      done(error as Error);
    }
  });
}

export function parseWebhookBody(contentType: string, raw: Buffer, maxDepth: number): WebhookBody {
  if (JSON_TYPE.test(contentType)) {
    const text = raw.toString('utf8');
    const body = parseJsonBody(text, maxDepth);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new FlowboxError('INVALID_BODY', 'the webhook body must be a JSON object');
    }
    return { body: body as Record<string, unknown>, rawBody: text, rawBodyEncoding: 'utf8' };
  }
  if (raw.length === 0) return NO_BODY;
  if (FORM_TYPE.test(contentType)) {
    const text = raw.toString('utf8');
    return { body: parseForm(text), rawBody: text, rawBodyEncoding: 'utf8' };
  }
  if (TEXT_TYPE.test(contentType)) {
    const text = raw.toString('utf8');
    return { body: text, rawBody: text, rawBodyEncoding: 'utf8' };
  }
  return { body: null, rawBody: raw.toString('base64'), rawBodyEncoding: 'base64' };
}

/** A form's fields; a key sent more than once keeps all its values, in order, as an array. */
export function parseForm(text: string): Record<string, string | string[]> {
  // Null prototype: a `__proto__` field is a field here, then refused below like a JSON one.
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = fields[key];
    if (seen === undefined) fields[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else fields[key] = [seen, value];
  }
  const finding = inspectJson(fields);
  if (finding !== null) {
    throw new FlowboxError(
      'INVALID_BODY',
      `the form holds a "__proto__" field (${finding.path}), which is refused`,
    );
  }
  return { ...fields };
}

/** The request as the flow sees it: the parsed body beside method, headers and query. */
export function toTriggerPayload(request: FastifyRequest): TriggerPayload {
  const { body, rawBody, rawBodyEncoding } = (request.body as WebhookBody | undefined) ?? NO_BODY;
  const headers: Record<string, string> = {};
  // Node lower-cases header names; a repeated header arrives as an array (set-cookie) or joined.
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers[name] = value;
    else if (Array.isArray(value)) headers[name] = value.join(', ');
  }
  const query: TriggerPayload['query'] = {};
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    // Assigning an array to `__proto__` would set the object's prototype.
    if (name === '__proto__') {
      throw new FlowboxError(
        'INVALID_REQUEST',
        'the query string holds a "__proto__" parameter, which is refused',
      );
    }
    if (typeof value === 'string') query[name] = value;
    else if (Array.isArray(value)) query[name] = value.map(String);
  }
  return { method: request.method, headers, query, body, rawBody, rawBodyEncoding };
}
