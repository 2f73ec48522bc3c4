import { createHash } from 'node:crypto';
import { type FlowBundle, FlowboxError, type PieceRef, wrapCodeStep } from '@flowbox/protocol';
import type { PieceCatalog } from '../pieces/piece-catalog.ts';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import type { FlowsRepository, FlowVersionRecord } from './flows-repository.ts';

/**
 * Publishing builds a version's flow bundle (definition plus compiled code steps, pinned to the
 * piece versions of this moment), stores it in S3 under its sha256 and makes it the version
 * webhooks run. Workers fetch it once and verify it against the recorded hash.
 */
export class FlowPublisher {
  readonly #flows: FlowsRepository;
  readonly #storage: ObjectStorage;
  readonly #catalog: PieceCatalog;

  constructor(deps: { flows: FlowsRepository; storage: ObjectStorage; catalog: PieceCatalog }) {
    this.#flows = deps.flows;
    this.#storage = deps.storage;
    this.#catalog = deps.catalog;
  }

  async publish(version: FlowVersionRecord): Promise<FlowVersionRecord> {
    const bundle = this.build(version);
    const bytes = Buffer.from(JSON.stringify(bundle));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = objectKeys.flowBundle(version.id, sha256);
    await this.#storage.put(key, bytes, 'application/json');
    const record = { key, sha256, sizeBytes: bytes.byteLength, pieces: bundle.pieces };
    await this.#flows.publish(version.id, record);
    return { ...version, bundle: record, publishedAt: version.publishedAt ?? new Date() };
  }

  build(version: FlowVersionRecord): FlowBundle {
    const { definition } = version;
    const code: Record<string, string> = {};
    const names = new Set<string>([definition.trigger.piece]);
    for (const step of definition.steps) {
      if (step.type === 'code') code[step.name] = wrapCodeStep(step.code);
      else names.add(step.piece);
    }
    const pieces: PieceRef[] = [...names].sort().map((name) => {
      const piece = this.#catalog.get(name);
      if (piece === undefined) throw new FlowboxError('INVALID_FLOW', `unknown piece '${name}'`);
      return { name, version: piece.manifest.version };
    });
    return { version: 1, flowId: version.flowId, flowVersionId: version.id, definition, code, pieces };
  }
}
