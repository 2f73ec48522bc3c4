import { FlowboxError } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';

/**
 * The first place in a parsed JSON value that a body may not hold: a `__proto__` key, or a
 * `constructor` key holding a `prototype` (code that copies such a body could change the
 * prototype of its objects), or nesting past `maxDepth` (the top object or array is depth 1;
 * code that recurses over the body, JSON.stringify included, overflows the stack).
 */
export type JsonFinding =
  | { kind: 'prototype-key'; key: '__proto__' | 'constructor'; path: string }
  | { kind: 'too-deep'; path: string };

interface Visit {
  value: unknown;
  depth: number;
  /** The path is rebuilt from these only for a finding: building it per node is quadratic. */
  parent: Visit | null;
  segment: string;
}

/** Iterative, so any depth is measured without recursion; stops at the first finding. */
export function inspectJson(value: unknown, maxDepth = Number.POSITIVE_INFINITY): JsonFinding | null {
  const pending: Visit[] = [{ value, depth: 1, parent: null, segment: '' }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const node = visit.value;
    if (typeof node !== 'object' || node === null) continue;
    if (visit.depth > maxDepth) return { kind: 'too-deep', path: pathOf(visit) };
    const child = (value: unknown, segment: string): Visit => ({
      value,
      depth: visit.depth + 1,
      parent: visit,
      segment,
    });
    if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index -= 1)
        pending.push(child(node[index], `[${index}]`));
      continue;
    }
    for (const [key, item] of Object.entries(node)) {
      const segment = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
      if (key === '__proto__') return { kind: 'prototype-key', key, path: pathOf(child(item, segment)) };
      if (
        key === 'constructor' &&
        typeof item === 'object' &&
        item !== null &&
        Object.hasOwn(item, 'prototype')
      )
        return { kind: 'prototype-key', key, path: pathOf(child(item, segment)) };
      pending.push(child(item, segment));
    }
  }
  return null;
}

/** Segments shown of a path; a deeper one shows its last ones only. */
const PATH_SEGMENTS_SHOWN = 8;

/** `body.a[0].b` as the caller wrote it; `body` for the top. */
function pathOf(visit: Visit): string {
  const segments: string[] = [];
  for (let at: Visit | null = visit; at?.parent != null; at = at.parent) segments.push(at.segment);
  segments.reverse();
  if (segments.length <= PATH_SEGMENTS_SHOWN) return `body${segments.join('')}`;
  return `body…${segments.slice(-PATH_SEGMENTS_SHOWN).join('')}`;
}

/**
 * Parses a JSON body, refusing what inspectJson finds (a prototype key always; nesting past
 * `maxDepth` when given), with a message saying what was refused.
 */
export function parseJsonBody(text: string, maxDepth?: number): unknown {
  if (text.length === 0) {
    throw new FlowboxError('INVALID_BODY', 'the body is empty but its content-type is application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FlowboxError('INVALID_BODY', `the body is not valid JSON: ${(error as Error).message}`);
  }
  // Most bodies cannot hold such a key (it would be spelt out, or escaped with \u): no walk.
  const suspect = text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
  const finding = suspect || maxDepth !== undefined ? inspectJson(value, maxDepth) : null;
  if (finding?.kind === 'prototype-key') {
    const what =
      finding.key === '__proto__' ? 'a "__proto__" key' : 'a "constructor" key holding "prototype"';
    throw new FlowboxError(
      'INVALID_BODY',
      `the body holds ${what} (${finding.path}), which is refused: it could change the prototype of objects built from the body`,
    );
  }
  if (finding?.kind === 'too-deep') {
    throw new FlowboxError(
      'INVALID_BODY',
      `the webhook body nests deeper than ${maxDepth} levels (at ${finding.path}; WEBHOOK_MAX_DEPTH)`,
    );
  }
  // Only a `\uD800`–`\uDFFF` escape can make a lone surrogate: UTF-8 text decodes to none.
  return SURROGATE_ESCAPE.test(text) ? replaceLoneSurrogates(value) : value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * `value` (fresh from JSON.parse, changed in place) with each lone UTF-16 surrogate in its
 * strings and keys replaced by U+FFFD, as the run's record stores it (db/jsonb.ts): the flow, the
 * stored trigger and a re-run then see the same text. Iterative, like inspectJson.
 */
export function replaceLoneSurrogates(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  const pending: unknown[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    const target = node as Record<string, unknown>;
    const entries = Object.entries(target);
    const rekey = entries.some(([key]) => !key.isWellFormed());
    if (rekey) for (const [key] of entries) delete target[key];
    for (const [key, item] of entries) {
      const fixed = typeof item === 'string' ? item.toWellFormed() : item;
      if (rekey) target[key.toWellFormed()] = fixed;
      else if (fixed !== item) target[key] = fixed;
      pending.push(fixed);
    }
  }
  return value;
}

/**
 * Replaces fastify's JSON parser, which answers a `__proto__` key, like any other refusal, with
 * "Body is not valid JSON": this one says what was refused. Nesting is bounded by the routes that
 * need it (webhooks, WEBHOOK_MAX_DEPTH, with their own parser: webhook-body.ts): engine callbacks
 * carry user data inside their own.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, raw, done) => {
    try {
      done(null, parseJsonBody(typeof raw === 'string' ? raw : raw.toString('utf8')));
    } catch (error) {
      done(error as Error);
    }
  });
}
