import { callSync } from './host-bridge.ts';

/**
 * Runs inside a run's isolate: URL and URLSearchParams. Parsing is the engine's own WHATWG
 * parser (`url` on the host bridge), so a URL here reads exactly as the egress check will read
 * it; URLSearchParams is pure code.
 */
interface UrlParts {
  href: string;
  origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  hash: string;
}

type Settable = Exclude<keyof UrlParts, 'origin'>;

function parse(input: string, base?: string): UrlParts | null {
  return callSync('url', input, base) as UrlParts | null;
}

export class IsolateURL {
  #parts: UrlParts;
  #params: IsolateURLSearchParams | undefined;

  constructor(input: unknown, base?: unknown) {
    const parts = parse(String(input), base === undefined ? undefined : String(base));
    if (parts === null) throw new TypeError(`Invalid URL: ${String(input)}`);
    this.#parts = parts;
  }

  static canParse(input: unknown, base?: unknown): boolean {
    return parse(String(input), base === undefined ? undefined : String(base)) !== null;
  }

  static parse(input: unknown, base?: unknown): IsolateURL | null {
    return IsolateURL.canParse(input, base) ? new IsolateURL(input, base) : null;
  }

  #set(field: Settable, value: unknown): void {
    const parts = callSync('url-set', this.#parts.href, field, String(value)) as UrlParts | null;
    if (parts === null) {
      if (field === 'href') throw new TypeError(`Invalid URL: ${String(value)}`);
      return;
    }
    this.#parts = parts;
    if (field === 'search' || field === 'href') this.#params?.replaceFrom(parts.search);
  }

  get href() {
    return this.#parts.href;
  }
  set href(value: string) {
    this.#set('href', value);
  }
  get origin() {
    return this.#parts.origin;
  }
  get protocol() {
    return this.#parts.protocol;
  }
  set protocol(value: string) {
    this.#set('protocol', value);
  }
  get username() {
    return this.#parts.username;
  }
  set username(value: string) {
    this.#set('username', value);
  }
  get password() {
    return this.#parts.password;
  }
  set password(value: string) {
    this.#set('password', value);
  }
  get host() {
    return this.#parts.host;
  }
  set host(value: string) {
    this.#set('host', value);
  }
  get hostname() {
    return this.#parts.hostname;
  }
  set hostname(value: string) {
    this.#set('hostname', value);
  }
  get port() {
    return this.#parts.port;
  }
  set port(value: string) {
    this.#set('port', value);
  }
  get pathname() {
    return this.#parts.pathname;
  }
  set pathname(value: string) {
    this.#set('pathname', value);
  }
  get search() {
    return this.#parts.search;
  }
  set search(value: string) {
    this.#set('search', value);
  }
  get hash() {
    return this.#parts.hash;
  }
  set hash(value: string) {
    this.#set('hash', value);
  }

  get searchParams(): IsolateURLSearchParams {
    this.#params ??= new IsolateURLSearchParams(this.#parts.search, (query) => {
      this.#set('search', query);
    });
    return this.#params;
  }

  toString(): string {
    return this.#parts.href;
  }

  toJSON(): string {
    return this.#parts.href;
  }
}

type ParamsInit = string | Iterable<readonly [unknown, unknown]> | Record<string, unknown> | undefined;

export class IsolateURLSearchParams {
  #pairs: [string, string][] = [];
  readonly #onChange: ((query: string) => void) | undefined;

  constructor(init?: ParamsInit, onChange?: (query: string) => void) {
    this.#onChange = onChange;
    if (typeof init === 'string') this.#pairs = parseQuery(init);
    else if (init instanceof IsolateURLSearchParams) this.#pairs = [...init.entries()];
    else if (init !== null && typeof init === 'object') {
      if (Symbol.iterator in init) {
        for (const pair of init as Iterable<readonly [unknown, unknown]>) {
          if (pair.length !== 2) throw new TypeError('each pair must have two items');
          this.#pairs.push([String(pair[0]), String(pair[1])]);
        }
      } else {
        for (const [name, value] of Object.entries(init)) this.#pairs.push([name, String(value)]);
      }
    }
  }

  /** The URL's search changed: take its pairs, without telling the URL back. */
  replaceFrom(search: string): void {
    this.#pairs = parseQuery(search);
  }

  #changed(): void {
    const query = this.toString();
    this.#onChange?.(query === '' ? '' : `?${query}`);
  }

  get size(): number {
    return this.#pairs.length;
  }

  append(name: unknown, value: unknown): void {
    this.#pairs.push([String(name), String(value)]);
    this.#changed();
  }

  delete(name: unknown, value?: unknown): void {
    const key = String(name);
    this.#pairs = this.#pairs.filter(([n, v]) => n !== key || (value !== undefined && v !== String(value)));
    this.#changed();
  }

  get(name: unknown): string | null {
    return this.#pairs.find(([n]) => n === String(name))?.[1] ?? null;
  }

  getAll(name: unknown): string[] {
    return this.#pairs.filter(([n]) => n === String(name)).map(([, v]) => v);
  }

  has(name: unknown, value?: unknown): boolean {
    return this.#pairs.some(([n, v]) => n === String(name) && (value === undefined || v === String(value)));
  }

  set(name: unknown, value: unknown): void {
    const key = String(name);
    const index = this.#pairs.findIndex(([n]) => n === key);
    if (index < 0) this.#pairs.push([key, String(value)]);
    else {
      this.#pairs[index] = [key, String(value)];
      this.#pairs = this.#pairs.filter(([n], i) => n !== key || i === index);
    }
    this.#changed();
  }

  sort(): void {
    this.#pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.#changed();
  }

  forEach(callback: (value: string, name: string, params: IsolateURLSearchParams) => void): void {
    for (const [name, value] of this.#pairs) callback(value, name, this);
  }

  keys(): IterableIterator<string> {
    return this.#pairs.map(([n]) => n)[Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return this.#pairs.map(([, v]) => v)[Symbol.iterator]();
  }

  entries(): IterableIterator<[string, string]> {
    return this.#pairs.map(([n, v]): [string, string] => [n, v])[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  toString(): string {
    return this.#pairs.map(([n, v]) => `${encodeForm(n)}=${encodeForm(v)}`).join('&');
  }
}

/** application/x-www-form-urlencoded: only `*-._`, letters and digits stay; a space is `+`. */
function encodeForm(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

function parseQuery(query: string): [string, string][] {
  const text = query.startsWith('?') ? query.slice(1) : query;
  if (text === '') return [];
  return text
    .split('&')
    .filter((part) => part !== '')
    .map((part): [string, string] => {
      const at = part.indexOf('=');
      const [name, value] = at < 0 ? [part, ''] : [part.slice(0, at), part.slice(at + 1)];
      return [decodeForm(name), decodeForm(value)];
    });
}

function decodeForm(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
