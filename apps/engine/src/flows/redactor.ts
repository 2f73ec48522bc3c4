import type { ResolvedConnections, TriggerPayload } from '@flowbox/protocol';

/**
 * Replaces a run's secrets with their names wherever something leaves the run: step inputs,
 * outputs, console lines and errors (sent to the app, kept in its log in S3) and the engine's log
 * lines. The run itself keeps the values (templates resolve them); what is shown is redacted.
 * The webhook response is not: it is what the flow chose to answer (docs/guarantees.md).
 */
export interface Redactor {
  /** The value with every secret in any of its strings replaced; the input is not changed. */
  value<T>(value: T): T;
  text(text: string): string;
}

/**
 * Request headers that carry credentials: their values are shown as `[header:<name>]`, beside the
 * flow's signature header. A flow may still read them (`{{trigger.headers.authorization}}`).
 */
export const SECRET_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
];

/** Shorter values are not redacted: replacing a two-letter value everywhere would garble the run. */
const MIN_SECRET_LENGTH = 4;
/** A JSON value's string fields are redacted on their own from this length (ids, flags and units are shorter). */
const MIN_FIELD_LENGTH = 8;

/**
 * The run's redactor, or null when it has nothing to redact (no connection, no credential
 * header): then nothing is walked, so a run without secrets pays nothing.
 */
export function createRedactor(options: {
  connections: ResolvedConnections | undefined;
  trigger: TriggerPayload;
  /** The flow's signature header (`trigger.verify.header`), redacted like a credential. */
  signatureHeader?: string | undefined;
}): Redactor | null {
  const needles = new Map<string, string>();
  const add = (secret: string, label: string, min = MIN_SECRET_LENGTH) => {
    if (secret.length < min) return;
    for (const form of forms(secret)) if (!needles.has(form)) needles.set(form, label);
  };
  for (const [name, value] of Object.entries(options.connections ?? {})) {
    const label = `[connection:${name}]`;
    if (typeof value === 'string') {
      add(value, label);
      continue;
    }
    add(JSON.stringify(value), label);
    for (const leaf of stringLeaves(value)) add(leaf, label, MIN_FIELD_LENGTH);
  }
  const headerNames = new Set(SECRET_HEADERS);
  if (options.signatureHeader !== undefined) headerNames.add(options.signatureHeader);
  for (const name of headerNames) {
    const value = options.trigger.headers[name];
    if (value === undefined) continue;
    const label = `[header:${name}]`;
    add(value, label);
    // `Bearer <token>`: the credentials alone, as a flow passing them on would use them.
    const credentials = /^[A-Za-z-]+ +(.+)$/.exec(value)?.[1];
    if (credentials !== undefined) add(credentials, label);
  }
  if (needles.size === 0) return null;
  // Longest first, so a value is replaced whole before any shorter secret inside it.
  const ordered = [...needles.entries()].sort(([a], [b]) => b.length - a.length);
  const text = (input: string): string => {
    let out = input;
    for (const [needle, label] of ordered) if (out.includes(needle)) out = out.split(needle).join(label);
    return out;
  };
  const walk = (input: unknown): unknown => {
    if (typeof input === 'string') return text(input);
    if (Array.isArray(input)) return input.map(walk);
    if (typeof input === 'object' && input !== null) {
      return Object.fromEntries(Object.entries(input).map(([key, item]) => [text(key), walk(item)]));
    }
    return input;
  };
  return { value: <T>(input: T) => walk(input) as T, text };
}

/**
 * The spellings of a secret that flowbox itself produces when a flow sends it on: as written;
 * percent-encoded (`encodeURIComponent`, space as `%20`); form-encoded (`URLSearchParams`: the
 * `http` piece's `query` and `form` body, space as `+`); as the URL parser writes it into a URL's
 * query or path (a template inside the `http` piece's `url`); base64 (`btoa`, a `Basic`
 * credential made of the value alone). Each also JSON-escaped once and twice: a JSON body sent
 * and echoed inside a JSON answer kept as text. A secret transformed otherwise (a substring, a
 * hash, base64 inside a longer text) is not recognised.
 */
function forms(secret: string): string[] {
  const spellings = [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams([['', secret]]).toString().slice(1),
    ...urlParserForms(secret),
    Buffer.from(secret, 'utf8').toString('base64'),
  ];
  const escaped = (form: string) => JSON.stringify(form).slice(1, -1);
  return [...new Set(spellings.flatMap((form) => [form, escaped(form), escaped(escaped(form))]))];
}

/** The secret in a URL's query and path as the URL parser percent-encodes it, where it is kept whole. */
function urlParserForms(secret: string): string[] {
  const candidates = [
    attempt(() => new URL(`http://h/?${secret}`).search.slice(1)),
    attempt(() => new URL(`http://h/${secret}`).pathname.slice(1)),
  ];
  // A `#`, `?` or `..` in the secret, or a tab or newline, would cut or change it: not its spelling.
  return candidates.filter(
    (form): form is string => form !== undefined && attempt(() => decodeURIComponent(form)) === secret,
  );
}

function attempt(spell: () => string): string | undefined {
  try {
    return spell();
  } catch {
    return undefined;
  }
}

function stringLeaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringLeaves);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringLeaves);
  return [];
}
