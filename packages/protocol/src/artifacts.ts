import { z } from 'zod';
import { FlowDefinitionSchema, PieceVersionSchema } from './flow.ts';

/**
 * What a worker provisions into its disk cache before a run: the flow bundle, the piece
 * archives the flow uses, and (from its own build output) the engine bundle.
 */

/** A piece version, as flows reference it and the app publishes it. */
export const PieceRefSchema = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/),
  version: PieceVersionSchema,
});
export type PieceRef = z.infer<typeof PieceRefSchema>;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex sha256');

/** An object in S3 the worker may fetch once through a presigned GET and must verify. */
export const ArtifactDownloadSchema = z.object({
  url: z.url(),
  sha256: Sha256Schema,
  sizeBytes: z.number().int().nonnegative(),
});
export type ArtifactDownload = z.infer<typeof ArtifactDownloadSchema>;

export const PieceDownloadSchema = PieceRefSchema.extend(ArtifactDownloadSchema.shape);
export type PieceDownload = z.infer<typeof PieceDownloadSchema>;

/**
 * The flow bundle: one JSON file per published flow version, built by the app at publish time
 * and stored in S3 under its sha256. Code steps are compiled (syntax-checked and wrapped) into
 * the source of an async function taking `inputs`, keyed by step name.
 */
export const FlowBundleSchema = z.object({
  version: z.literal(1),
  flowId: z.string(),
  flowVersionId: z.string(),
  definition: FlowDefinitionSchema,
  code: z.record(z.string(), z.string()),
  pieces: z.array(PieceRefSchema),
});
export type FlowBundle = z.infer<typeof FlowBundleSchema>;

/**
 * The manifest inside every piece archive (`manifest.json` beside `index.mjs`, the piece bundled
 * as one ES module whose default export is the piece).
 */
export const PieceManifestSchema = PieceRefSchema.extend({
  entry: z.literal('index.mjs'),
  actions: z.array(z.string()),
  triggers: z.array(z.string()),
  /** The triggers among `triggers` that poll (`strategy: 'polling'`); absent: none. */
  polling: z.array(z.string()).optional(),
});
export type PieceManifest = z.infer<typeof PieceManifestSchema>;

export function sha256Schema() {
  return Sha256Schema;
}

/**
 * Where an engine stores its run's log: an S3 POST upload (multipart form: every field of
 * `fields` in order, then the log as the part named `file`) whose signed policy pins the key, the
 * content type and the size, so the S3 server itself refuses a log over `maxBytes`.
 */
export const LogUploadSchema = z.object({
  url: z.url(),
  fields: z.record(z.string(), z.string()),
  key: z.string(),
  maxBytes: z.number().int().positive(),
});
export type LogUpload = z.infer<typeof LogUploadSchema>;
