import { z } from 'zod';
import { PieceRefSchema } from './artifacts.ts';

/**
 * The piece registry's messages: what `POST /v1/pieces` takes, and what the app's load-check
 * child (a short-lived process that imports a published piece's module) reports back.
 */

/**
 * `POST /v1/pieces`: the manifest and archive as `pnpm build` (or `flowbox piece build`) writes
 * them. The manifest is parsed on its own (PieceManifestSchema) so a bad one is named as such.
 */
export const PiecePublishRequestSchema = z.object({
  manifest: z.unknown(),
  /** `piece.tgz`, base64. */
  archive: z.base64(),
});
export type PiecePublishRequest = z.infer<typeof PiecePublishRequestSchema>;

/**
 * The credential an action declares (`auth` in @flowbox/pieces-framework): the connection a step
 * names must hold a value of `schema`; `required: false` lets a step name none.
 */
export const PieceAuthInfoSchema = z.object({
  type: z.enum(['SECRET_TEXT', 'BASIC_AUTH', 'CUSTOM_AUTH']),
  displayName: z.string(),
  description: z.string().optional(),
  required: z.boolean(),
  schema: z.record(z.string(), z.unknown()),
});
export type PieceAuthInfo = z.infer<typeof PieceAuthInfoSchema>;

/** One action of a loaded piece: its input as JSON Schema, and the credential it declares. */
export const PieceActionInfoSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  auth: PieceAuthInfoSchema.optional(),
});
export type PieceActionInfo = z.infer<typeof PieceActionInfoSchema>;

/**
 * What the load-check child prints on stdout, one JSON line, then exits. `nonce` is what its
 * parent gave it on stdin before the piece's module ran: a line without it is the module's.
 */
export const PieceLoadReportSchema = z.discriminatedUnion('type', [
  z.object({
    version: z.literal(1),
    type: z.literal('loaded'),
    nonce: z.string(),
    piece: PieceRefSchema,
    actions: z.array(PieceActionInfoSchema),
    triggers: z.array(z.string()),
    /** The polling triggers among them; absent: none. */
    polling: z.array(z.string()).optional(),
    /** Node built-in modules the piece's module imports (without `node:`), sorted. */
    nodeBuiltins: z.array(z.string()),
  }),
  z.object({ version: z.literal(1), type: z.literal('refused'), nonce: z.string(), problem: z.string() }),
]);
export type PieceLoadReport = z.infer<typeof PieceLoadReportSchema>;
