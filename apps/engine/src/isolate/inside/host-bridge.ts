/**
 * Runs inside a run's isolate. The engine's three references (isolated-vm `Reference`s to host
 * functions, handed in by `connect` once per isolate) and how the isolate's code calls them: every
 * capability the run has goes through one of these, named by its first argument, with plain
 * data copied both ways (isolate-host.ts is the other side).
 */
export interface HostReference {
  applySync(receiver: undefined, args: unknown[], options: object): unknown;
  apply(receiver: undefined, args: unknown[], options: object): Promise<unknown>;
  applyIgnored(receiver: undefined, args: unknown[], options: object): void;
}

export interface HostReferences {
  /** Answers at once: random bytes, UUIDs, digests, HMACs, URL parsing. */
  sync: HostReference;
  /** Answers later, as JSON text: sleep, fetch, a piece's ctx.fetch, the response. */
  async: HostReference;
  /** No answer: console lines and piece log lines. */
  notify: HostReference;
}

// Taken when the snapshot is made, before a code step could replace it.
const { parse } = JSON;
const COPY = { arguments: { copy: true }, result: { copy: true } };
const COPY_PROMISE = { arguments: { copy: true }, result: { copy: true, promise: true } };

/** Set by `connect` (snapshots hold no references); every call before it fails. */
const bridge: { references: HostReferences | undefined } = { references: undefined };

export function connectHost(references: HostReferences): void {
  bridge.references = references;
}

function references(): HostReferences {
  if (bridge.references === undefined) throw new Error('the run has not started');
  return bridge.references;
}

export function callSync(name: string, ...args: unknown[]): unknown {
  return references().sync.applySync(undefined, [name, args], COPY);
}

/** Resolves to the host's answer parsed: `{ value }` or `{ error: { code, message } }`. */
export async function callAsync(name: string, ...args: unknown[]): Promise<HostAnswer> {
  const text = await references().async.apply(undefined, [name, args], COPY_PROMISE);
  return parse(String(text)) as HostAnswer;
}

export type HostAnswer = { value?: unknown; error?: { code: string; message: string } };

export function notify(name: string, ...args: unknown[]): void {
  references().notify.applyIgnored(undefined, [name, args], { arguments: { copy: true } });
}
