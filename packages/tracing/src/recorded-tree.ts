import type { SpanRecord } from '@flowbox/protocol';

/**
 * The records that form one tree under `rootParentId` (the span another process was given as
 * its parent), parents before children. A record whose parent is neither that span nor a kept
 * record, a repeated span id, or one that ends before it starts is dropped: what a worker
 * exports for its engine stays one tree under the worker's own span, whatever the engine sent.
 */
export function recordedTree(rootParentId: string, records: readonly SpanRecord[]): SpanRecord[] {
  const children = new Map<string, SpanRecord[]>();
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const record of records) {
    if (seen.has(record.spanId)) repeated.add(record.spanId);
    seen.add(record.spanId);
  }
  for (const record of records) {
    if (repeated.has(record.spanId) || record.endMs < record.startMs) continue;
    const siblings = children.get(record.parentSpanId);
    if (siblings === undefined) children.set(record.parentSpanId, [record]);
    else siblings.push(record);
  }
  const kept: SpanRecord[] = [];
  const queue = [rootParentId];
  // Each span id is queued once at most (repeats were dropped), so a cycle cannot loop.
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (child.spanId === rootParentId) continue;
      kept.push(child);
      queue.push(child.spanId);
    }
  }
  return kept;
}
