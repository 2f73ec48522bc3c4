import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createS3Client } from '@flowbox/local-services';
import {
  type ArtifactDownload,
  type FlowBundle,
  type FlowDefinition,
  type PieceDownload,
  type PieceRef,
  walkSteps,
  wrapCodeStep,
} from '@flowbox/protocol';
import { inject } from 'vitest';
import { createTestBucket } from '../../../test/fixtures.ts';
import type { FetchFn } from '../src/cache/artifact-download.ts';
import type { PieceArchive } from './piece-archives.ts';

/**
 * Plays the app's part for artifacts: uploads flow bundles and piece archives to a fresh bucket
 * of the shared versitygw, under the app's keys, and hands out presigned GETs for them.
 */
export interface TestArtifactStore {
  publishBundle(bundle: FlowBundle): Promise<ArtifactDownload>;
  publishPiece(piece: PieceArchive): Promise<PieceDownload>;
  /** Uploads `bytes` under `key` and presigns a GET for it, claiming `claimed` as its hash and size. */
  publishRaw(
    key: string,
    bytes: Buffer,
    claimed?: { sha256: string; sizeBytes: number },
  ): Promise<ArtifactDownload>;
  close(): void;
}

export async function createTestArtifactStore(): Promise<TestArtifactStore> {
  const bucket = await createTestBucket();
  const client = createS3Client(inject('s3'));
  const publishRaw: TestArtifactStore['publishRaw'] = async (key, bytes, claimed) => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: 600,
    });
    return {
      url,
      sha256: claimed?.sha256 ?? sha256Hex(bytes),
      sizeBytes: claimed?.sizeBytes ?? bytes.byteLength,
    };
  };
  return {
    publishRaw,
    publishBundle(bundle) {
      const bytes = Buffer.from(JSON.stringify(bundle));
      return publishRaw(`bundles/${bundle.flowVersionId}/${sha256Hex(bytes)}.json`, bytes);
    },
    async publishPiece({ manifest, bytes }) {
      const { name, version } = manifest;
      const artifact = await publishRaw(`pieces/${name}/${version}/${sha256Hex(bytes)}.tgz`, bytes);
      return { name, version, ...artifact };
    },
    close: () => client.destroy(),
  };
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A flow bundle as the app builds one at publish time: code steps wrapped, pieces pinned. */
export function buildFlowBundle(
  flowVersionId: string,
  definition: FlowDefinition,
  versions: readonly PieceRef[],
): FlowBundle {
  const used = new Set([definition.trigger.piece]);
  const code: Record<string, string> = {};
  for (const { step } of walkSteps(definition)) {
    if (step.type === 'piece') used.add(step.piece);
    else if (step.type === 'code') code[step.name] = wrapCodeStep(step.code);
  }
  const pieces = [...used].map((name) => {
    const ref = versions.find((v) => v.name === name);
    if (ref === undefined) throw new Error(`no archive for piece ${name}`);
    return { name: ref.name, version: ref.version };
  });
  return { version: 1, flowId: `flow-of-${flowVersionId}`, flowVersionId, definition, code, pieces };
}

/** A fetch that records every URL it is asked for (the path only: the query holds a signature). */
export function countingFetch(): { fetch: FetchFn; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetch: (url, init) => {
      requests.push(new URL(url).pathname);
      return fetch(url, init);
    },
  };
}
