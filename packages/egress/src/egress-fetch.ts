import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { FlowboxError } from '@flowbox/protocol';
import { type AddressClass, AddressClassifier } from './address-class.ts';
import {
  type EgressPolicy,
  egressAllowing,
  egressEntry,
  egressPolicyText,
  isNamed,
} from './egress-policy.ts';
import type { FetchBudget, FetchSlot } from './fetch-budget.ts';

export interface EgressRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** How the response body is handed back: `text` (UTF-8, the default) or `base64` (its bytes, for binary answers). */
  responseEncoding?: 'text' | 'base64' | undefined;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

export interface EgressLimits {
  maxRequestBytes: number;
  maxResponseBytes: number;
  maxRedirects: number;
}

/** Code steps' `fetch`: bodies are text, at most 1 MiB out and 5 MiB in, 5 redirects. */
export const CODE_STEP_FETCH_LIMITS: EgressLimits = {
  maxRequestBytes: 1024 * 1024,
  maxResponseBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
};

/**
 * One run's `fetch`. `slot`: a slot of the run's budget the caller already holds (the worker's
 * relay takes one before it reads the request); without it the fetch takes its own.
 */
export type EgressFetch = (
  request: EgressRequest,
  signal: AbortSignal,
  slot?: FetchSlot,
) => Promise<EgressResponse>;

/** What a request holds of its run's budget before any answer: its URL, headers and body. */
export function requestBytes(request: EgressRequest): number {
  let bytes = Buffer.byteLength(request.url) + Buffer.byteLength(request.body ?? '');
  for (const [name, value] of Object.entries(request.headers)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  return bytes;
}

/** Resolves a host name to every address it has. */
export type ResolveHost = (host: string) => Promise<Array<{ address: string; family: number }>>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers the caller may not set: they describe the connection, which is ours. */
const REFUSED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'upgrade']);

/**
 * HTTP for code steps and pieces (their `ctx.fetch`) under an egress policy. Each hop (the request and every redirect, followed
 * here rather than by the client) is checked before anything connects: the host must be named by
 * the policy, or the policy must allow the public internet and every address the host resolves
 * to must be public. The connection then goes to the address that was checked, so a DNS answer
 * that changes between the check and the connect (rebinding) changes nothing. Bodies are text,
 * bounded both ways; the caller's signal (the step's timeout) covers the whole exchange. Each
 * fetch is one run's (`budget`): it waits for a slot, and its response counts against the run's
 * bytes as they arrive, so a fan-out stops streaming as soon as the run's budget is spent.
 */
export function createEgressFetch(options: {
  policy: EgressPolicy;
  limits: EgressLimits;
  /** The run's: every fetch this function makes shares it. */
  budget: FetchBudget;
  resolve?: ResolveHost;
  /**
   * The address ranges, built once by whoever makes fetches run after run (the worker's relay
   * makes one per job): building them is ~20 BlockLists. Default: a new one.
   */
  classifier?: AddressClassifier;
}): EgressFetch {
  const classifier = options.classifier ?? new AddressClassifier();
  const resolve: ResolveHost = options.resolve ?? ((host) => dnsLookup(host, { all: true }));

  /** The address to connect to for this URL, or a refusal saying why. */
  const checkedAddress = async (url: URL): Promise<{ address: string; family: number }> => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const named = isNamed(options.policy, host, port);
    // Each refusal names the setting and the value that would allow this host and port.
    const allowing = `EGRESS=${egressAllowing(options.policy, host, port)} would allow it`;
    if (!named && !options.policy.allowPublic) {
      throw denied(
        `${egressEntry(host, port)} is not in the egress policy (EGRESS=${egressPolicyText(options.policy)}); ${allowing}`,
      );
    }
    const family = isIP(host);
    const addresses = family === 0 ? await resolveOrFail(resolve, host) : [{ address: host, family }];
    if (!named) {
      for (const { address } of addresses) {
        const kind: AddressClass = classifier.classify(address);
        if (kind === 'public') continue;
        throw denied(
          family === 0
            ? `${egressEntry(host, port)} resolves to ${address}, a ${kind} address; ${allowing}`
            : `${egressEntry(host, port)} is a ${kind} address; ${allowing}`,
        );
      }
    }
    const first = addresses[0];
    if (first === undefined) throw failed(`${host} has no address`);
    return first;
  };

  return async (request, signal, given) => {
    const body = request.body ?? '';
    if (Buffer.byteLength(body) > options.limits.maxRequestBytes) {
      throw failed(`the request body is over ${options.limits.maxRequestBytes} bytes`);
    }
    const slot = given ?? (await options.budget.acquire(signal, requestBytes(request)));
    try {
      return await exchange(request, body, signal, slot);
    } finally {
      if (given === undefined) slot.release();
    }
  };

  async function exchange(
    request: EgressRequest,
    body: string,
    signal: AbortSignal,
    slot: FetchSlot,
  ): Promise<EgressResponse> {
    let url = parseUrl(request.url);
    let method = request.method.toUpperCase();
    let sendBody: string | undefined = body === '' ? undefined : body;
    for (let hop = 0; ; hop += 1) {
      signal.throwIfAborted();
      const target = await checkedAddress(url);
      const response = await send(url, method, request.headers, sendBody, target, signal);
      const location = response.headers.location;
      if (REDIRECTS.has(response.statusCode ?? 0) && typeof location === 'string') {
        response.destroy();
        if (hop >= options.limits.maxRedirects)
          throw failed(`more than ${options.limits.maxRedirects} redirects`);
        url = parseUrl(new URL(location, url).toString());
        // As fetch does: 303, and 301/302 after a POST, continue as a GET without the body.
        if (
          response.statusCode === 303 ||
          (method === 'POST' && response.statusCode !== 307 && response.statusCode !== 308)
        ) {
          method = 'GET';
          sendBody = undefined;
        }
        continue;
      }
      return {
        status: response.statusCode ?? 0,
        headers: flatHeaders(response),
        body: await readBody(response, options.limits.maxResponseBytes, slot)
          .then((bytes) => bytes.toString(request.responseEncoding === 'base64' ? 'base64' : 'utf8'))
          .catch((error: unknown) => {
            throw signal.aborted ? signal.reason : error;
          }),
        url: url.toString(),
      };
    }
  }
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  target: { address: string; family: number },
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // Connect to the checked address whatever the name resolves to now.
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    if (lookupOptions.all === true) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
  const outgoing: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!REFUSED_HEADERS.has(name.toLowerCase())) outgoing[name] = value;
  }
  if (body !== undefined) outgoing['content-length'] = String(Buffer.byteLength(body));
  const requestOptions: RequestOptions = { method, headers: outgoing, lookup: pinned, signal };
  const requester = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoingRequest = requester(url, requestOptions, resolve);
    outgoingRequest.on('error', (error) =>
      reject(signal.aborted ? signal.reason : failed(`${method} ${url.origin} failed: ${error.message}`)),
    );
    outgoingRequest.end(body);
  });
}

async function readBody(response: IncomingMessage, maxBytes: number, slot: FetchSlot): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).byteLength;
    if (size > maxBytes) {
      response.destroy();
      throw failed(`the response body is over ${maxBytes} bytes`);
    }
    try {
      slot.hold((chunk as Buffer).byteLength);
    } catch (error) {
      response.destroy();
      throw error;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw failed(`not a URL: ${text.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw denied(`only http and https are allowed, not ${url.protocol}`);
  }
  return url;
}

async function resolveOrFail(resolve: ResolveHost, host: string) {
  try {
    return await resolve(host);
  } catch (error) {
    throw failed(`${host} could not be resolved: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function denied(message: string): FlowboxError {
  return new FlowboxError('EGRESS_DENIED', message);
}

function failed(message: string): FlowboxError {
  return new FlowboxError('CODE_STEP_FETCH_FAILED', message);
}
