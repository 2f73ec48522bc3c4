import { createAction } from '@flowbox/pieces-framework';
import { z } from 'zod';

/** Header and query values come from templates as text or numbers; both are sent as text. */
const TextRecord = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String));

const FormFields = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

const SendRequestInputSchema = z
  .object({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']).default('GET'),
    url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }),
    headers: TextRecord.default({}),
    /** Added to the URL's own query. */
    query: TextRecord.default({}),
    /**
     * `json`: the body as JSON (any value); `text`: a string as it is; `form`: an object of fields,
     * URL-encoded. Each sets its content-type unless `headers` has one.
     */
    bodyType: z.enum(['json', 'text', 'form']).default('json'),
    body: z.unknown().optional(),
    // Coerced: a template inside a string yields text.
    timeoutMs: z.coerce.number().int().min(1).max(600_000).default(30_000),
    /** `json`: the body parsed (empty: null); `text`: as UTF-8; `base64`: the bytes, for binary answers. */
    responseType: z.enum(['json', 'text', 'base64']).default('json'),
  })
  .superRefine((input, ctx) => {
    // Checked with the input, so a wrong body fails as INVALID_STEP_INPUT before anything is sent.
    if (input.body === undefined || input.body === null) return;
    if (input.bodyType === 'text' && typeof input.body !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['body'], message: 'a text body must be a string' });
    }
    if (input.bodyType === 'form' && !FormFields.safeParse(input.body).success) {
      ctx.addIssue({
        code: 'custom',
        path: ['body'],
        message: 'a form body must be an object of text, number or boolean fields',
      });
    }
  });
type SendRequestInput = z.infer<typeof SendRequestInputSchema>;

const CONTENT_TYPES = {
  json: 'application/json',
  text: 'text/plain; charset=utf-8',
  form: 'application/x-www-form-urlencoded',
} as const;

/**
 * One HTTP request through `ctx.fetch`, under the worker's egress policy like a code step's
 * `fetch`. Any status is an answer (the flow decides what a 404 means); a refused host, a failed
 * connection, an oversized body or the timeout fail the step.
 */
export const sendRequest = createAction({
  name: 'send_request',
  description: 'Sends an HTTP request and returns its status, headers and body.',
  input: SendRequestInputSchema,
  async run(input, ctx) {
    const url = new URL(input.url);
    for (const [name, value] of Object.entries(input.query)) url.searchParams.append(name, value);
    const headers = { ...input.headers };
    const body = encodeBody(input);
    if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = CONTENT_TYPES[input.bodyType];
    }
    const response = await ctx.fetch({
      url: url.toString(),
      method: input.method,
      headers,
      ...(body === undefined ? {} : { body }),
      timeoutMs: input.timeoutMs,
      responseEncoding: input.responseType === 'base64' ? 'base64' : 'text',
    });
    return {
      status: response.status,
      headers: response.headers,
      body: input.responseType === 'json' ? parseJson(response.body, response.status) : response.body,
    };
  },
});

/** The body as text, or undefined for none (no body, or null outside JSON). */
function encodeBody(input: SendRequestInput): string | undefined {
  if (input.body === undefined || (input.body === null && input.bodyType !== 'json')) return undefined;
  switch (input.bodyType) {
    case 'json':
      return JSON.stringify(input.body);
    case 'text':
      return String(input.body);
    case 'form': {
      const fields = FormFields.parse(input.body);
      return new URLSearchParams(
        Object.entries(fields).map(([name, value]): [string, string] => [name, String(value)]),
      ).toString();
    }
  }
}

function parseJson(text: string, status: number): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `the response (status ${status}) is not JSON: ${text.slice(0, 120)}; use responseType text or base64`,
    );
  }
}
