import { createTrigger, type PollContext } from '@flowbox/pieces-framework';

/** The longest answer a poll reads, as `ctx.fetch` allows. */
const TIMEOUT_MS = 30_000;

interface NewItemsInput {
  url: string;
  headers: Record<string, string>;
  path: string;
  keyField: string;
}

/**
 * Polls a JSON URL: GET it, take the array at `path` (dot-separated, e.g. `data.items`; empty:
 * the body itself), and start one run per item whose `keyField` was not seen before. It keeps no
 * state of its own: the app remembers the keys it has started runs for.
 */
export const newItems = createTrigger({
  name: 'new_items',
  description:
    'Polls a JSON URL every `intervalSeconds` and starts one run per new item of the array at `path`, told apart by `keyField` (default `id`); the output is the item.',
  strategy: 'polling',
  dedupe: { by: 'id', field: (input) => readInput(input).keyField },
  async poll(ctx: PollContext) {
    const input = readInput(ctx.input);
    const response = await ctx.fetch({
      url: input.url,
      method: 'GET',
      headers: { accept: 'application/json', ...input.headers },
      timeoutMs: TIMEOUT_MS,
    });
    if (response.status < 200 || response.status >= 300) {
      throw new Error(`GET ${new URL(input.url).origin} answered ${response.status}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      throw new Error(`GET ${new URL(input.url).origin} did not answer JSON`);
    }
    const items = atPath(body, input.path);
    if (!Array.isArray(items)) {
      throw new Error(`path: the answer has no array at '${input.path || '(the body)'}'`);
    }
    return { items };
  },
});

function readInput(raw: Record<string, unknown>): NewItemsInput {
  const { url, headers = {}, path = '', keyField = 'id' } = raw;
  if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new Error('url: must be an http or https URL');
  }
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new Error('headers: must be an object');
  }
  if (typeof path !== 'string') throw new Error('path: must be a string');
  if (typeof keyField !== 'string' || keyField === '') throw new Error('keyField: must be a field name');
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) plain[name] = String(value);
  return { url, headers: plain, path, keyField };
}

function atPath(value: unknown, path: string): unknown {
  let at = value;
  for (const part of path.split('.').filter((p) => p !== '')) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}
