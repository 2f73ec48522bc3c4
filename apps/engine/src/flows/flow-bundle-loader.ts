import { readFile } from 'node:fs/promises';
import {
  type FlowBundle,
  FlowBundleSchema,
  FlowboxError,
  formatIssues,
  parseStored,
} from '@flowbox/protocol';

/** Reads the flow bundles the worker provisioned; a bundle that cannot be used is `PROVISION_FAILED`. */
export interface FlowBundleLoader {
  load(path: string): Promise<FlowBundle>;
}

/** Enough for every flow a warm engine plausibly serves between recycles. */
const DEFAULT_CAPACITY = 64;

/**
 * Bundles are immutable once provisioned (the worker keeps them by version and hash), so a
 * warm engine parses each file once; the oldest entries go first past `capacity`.
 */
export function createFlowBundleLoader(capacity = DEFAULT_CAPACITY): FlowBundleLoader {
  const cache = new Map<string, Promise<FlowBundle>>();
  return {
    load(path) {
      const cached = cache.get(path);
      if (cached !== undefined) return cached;
      const loading = readBundle(path);
      cache.set(path, loading);
      // A failure is not kept: the worker may provision the file again.
      loading.catch(() => cache.delete(path));
      if (cache.size > capacity) {
        const [oldest] = cache.keys();
        if (oldest !== undefined) cache.delete(oldest);
      }
      return loading;
    },
  };
}

async function readBundle(path: string): Promise<FlowBundle> {
  let frame: unknown;
  try {
    frame = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlowboxError('PROVISION_FAILED', `cannot read the flow bundle ${path}: ${message}`, {
      cause: error,
    });
  }
  // An app newer than this engine may write fields it does not know: dropped, not refused.
  const parsed = parseStored(FlowBundleSchema, frame);
  if (!parsed.success) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `invalid flow bundle ${path}: ${formatIssues(parsed.error.issues)}`,
    );
  }
  const bundle = parsed.data;
  for (const step of bundle.definition.steps) {
    if (step.type === 'code' && typeof bundle.code[step.name] !== 'string') {
      throw new FlowboxError('PROVISION_FAILED', `flow bundle ${path} has no compiled code for ${step.name}`);
    }
  }
  return bundle;
}
