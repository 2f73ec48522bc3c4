import { createAction, invalidInput, Property, type PropsValue } from '@flowbox/pieces-framework';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const props = {
  method: Property.StaticDropdown({ displayName: 'Method', options: METHODS, defaultValue: 'GET' }),
  url: Property.ShortText({ displayName: 'URL', description: 'An http or https URL.', required: true }),
  headers: Property.Object({ displayName: 'Headers', defaultValue: {} }),
  query: Property.Object({
    displayName: 'Query',
    description: "Added to the URL's own query.",
    defaultValue: {},
  }),
  bodyType: Property.StaticDropdown({
    displayName: 'Body type',
    description:
      '`json`: the body as JSON (any value); `text`: a string as it is; `form`: an object of fields, URL-encoded. Each sets its content-type unless `headers` has one.',
    options: ['json', 'text', 'form'],
    defaultValue: 'json',
  }),
  body: Property.Json({ displayName: 'Body' }),
  timeoutMs: Property.Number({
    displayName: 'Timeout (ms)',
    integer: true,
    min: 1,
    max: 600_000,
    defaultValue: 30_000,
  }),
  responseType: Property.StaticDropdown({
    displayName: 'Response type',
    description:
      '`json`: the body parsed (empty: null); `text`: as UTF-8; `base64`: the bytes, for binary answers.',
    options: ['json', 'text', 'base64'],
    defaultValue: 'json',
  }),
};

type SendRequestInput = PropsValue<typeof props>;
type FormFields = Record<string, string | number | boolean>;

/**
 * What the schema cannot say, checked before anything is sent so it fails as INVALID_STEP_INPUT
 * too: the URL's scheme, and a body that does not fit its `bodyType`.
 */
function inputProblems(input: SendRequestInput): string[] {
  const problems: string[] = [];
  if (!URL.canParse(input.url) || !/^https?:$/.test(new URL(input.url).protocol)) {
    problems.push('url: must be an http or https URL');
  }
  if (input.body !== undefined && input.body !== null) {
    if (input.bodyType === 'text' && typeof input.body !== 'string') {
      problems.push('body: a text body must be a string');
    }
    if (input.bodyType === 'form' && !isFormFields(input.body)) {
      problems.push('body: a form body must be an object of text, number or boolean fields');
    }
  }
  return problems;
}

function isFormFields(value: unknown): value is FormFields {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((field) => ['string', 'number', 'boolean'].includes(typeof field))
  );
}

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
  props,
  async run(input, ctx) {
    const problems = inputProblems(input);
    if (problems.length > 0) throw invalidInput('send_request', ctx.stepName, problems.join('; '));
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
      const fields = isFormFields(input.body) ? input.body : {};
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
