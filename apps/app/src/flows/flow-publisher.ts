import { createHash } from 'node:crypto';
import {
  connectionNamesOf,
  type FlowBundle,
  FlowboxError,
  type PieceRef,
  walkSteps,
  wrapCodeStep,
} from '@flowbox/protocol';
import type { Connections } from '../connections/connections.ts';
import type { PieceIndex, PieceRegistry } from '../pieces/piece-registry.ts';
import { checkScheduleTrigger } from '../schedules/schedule-spec.ts';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import { checkErrorFlow } from './error-flow-check.ts';
import type { FlowsRepository, FlowVersionRecord, PublishRecord } from './flows-repository.ts';

/** What a publish reads before its transaction (FlowPublisher.check). */
export interface PublishChecks {
  connections: string[];
  index: PieceIndex;
}

/**
 * Publishing builds a version's flow bundle (definition plus compiled code steps, pinned to the
 * piece versions of this moment), stores it in S3 under its sha256 and makes it the version
 * webhooks run. Workers fetch it once and verify it against the recorded hash.
 */
export class FlowPublisher {
  readonly #flows: FlowsRepository;
  readonly #storage: ObjectStorage;
  readonly #registry: PieceRegistry;
  readonly #connections: Connections;
  readonly #scheduleMinIntervalSeconds: number;

  constructor(deps: {
    flows: FlowsRepository;
    storage: ObjectStorage;
    registry: PieceRegistry;
    connections: Connections;
    /** SCHEDULE_MIN_INTERVAL_SECONDS, checked again at publish (it may have been raised). */
    scheduleMinIntervalSeconds?: number;
  }) {
    this.#scheduleMinIntervalSeconds = deps.scheduleMinIntervalSeconds ?? 60;
    this.#flows = deps.flows;
    this.#storage = deps.storage;
    this.#registry = deps.registry;
    this.#connections = deps.connections;
  }

  /**
   * Publishes a stored version. A version that references a connection that does not exist is
   * not published (INVALID_FLOW naming it). One deleted after this check fails the runs that need
   * it (CONNECTION_MISSING). Nor is one whose `onFailure` names itself or no flow
   * (error-flow-check.ts), nor a schedule trigger under SCHEDULE_MIN_INTERVAL_SECONDS.
   */
  async publish(version: FlowVersionRecord): Promise<FlowVersionRecord> {
    const record = await this.prepare(version);
    await this.#flows.publish(version.id, record.bundle, record.connections);
    return { ...version, ...record, publishedAt: version.publishedAt ?? new Date() };
  }

  /**
   * What publishing a definition reads from Postgres, checked: its connections exist, its
   * `onFailure` names a flow, its schedule is not too frequent; and the piece index its bundle
   * pins from. A create or add-and-publish reads it before its transaction, so the transaction
   * holds one pooled connection and never waits for a second (concurrent publishes as many as
   * the pool would otherwise each hold one and wait for another forever).
   */
  async check(flowId: string, definition: FlowVersionRecord['definition']): Promise<PublishChecks> {
    checkScheduleTrigger(definition.trigger, { minIntervalSeconds: this.#scheduleMinIntervalSeconds });
    await checkErrorFlow(this.#flows, flowId, definition);
    const connections = connectionNamesOf(definition);
    const missing = await this.#connections.missing(connections);
    if (missing.length > 0) {
      throw new FlowboxError(
        'INVALID_FLOW',
        `the flow references connection${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which do${missing.length > 1 ? '' : 'es'} not exist (POST /v1/connections)`,
      );
    }
    return { connections, index: await this.#registry.index() };
  }

  /**
   * Builds and stores a version's bundle from its checks, recording nothing: what a create or
   * add-and-publish calls inside the transaction that inserts the version (no Postgres read when
   * given `checks`).
   */
  async prepare(version: FlowVersionRecord, checks?: PublishChecks): Promise<PublishRecord> {
    const { connections, index } = checks ?? (await this.check(version.flowId, version.definition));
    const bundle = this.build(version, index);
    const bytes = Buffer.from(JSON.stringify(bundle));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = objectKeys.flowBundle(version.id, sha256);
    await this.#storage.put(key, bytes, 'application/json');
    return { bundle: { key, sha256, sizeBytes: bytes.byteLength, pieces: bundle.pieces }, connections };
  }

  /** Pins each piece to the version the definition names, or the latest published now. */
  build(version: FlowVersionRecord, index: PieceIndex): FlowBundle {
    const { definition } = version;
    const code: Record<string, string> = {};
    const refs = new Map<string, string | undefined>([
      [definition.trigger.piece, definition.trigger.version],
    ]);
    for (const { step } of walkSteps(definition)) {
      if (step.type === 'code') code[step.name] = wrapCodeStep(step.code);
      else if (step.type === 'piece' && (!refs.has(step.piece) || step.version !== undefined)) {
        refs.set(step.piece, step.version);
      }
    }
    const pieces: PieceRef[] = [...refs]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, wanted]) => {
        const piece = index.resolve(name, wanted);
        if (piece === undefined) {
          const yanked = wanted !== undefined && index.isYanked(name, wanted);
          throw new FlowboxError(
            'INVALID_FLOW',
            `piece ${name}${wanted === undefined ? '' : `@${wanted}`} is ${yanked ? 'yanked: nothing new can pin it' : 'not published'}`,
          );
        }
        return { name, version: piece.version };
      });
    return { version: 1, flowId: version.flowId, flowVersionId: version.id, definition, code, pieces };
  }
}
