import { envFields } from '@flowbox/node-kit';
import { ARCHIVE_EXTRACT_LIMITS } from '@flowbox/node-kit/archive-extract';
import { z } from 'zod';
import { parseTrustedPieces } from './pieces/trusted-pieces.ts';

/** The app's settings for pieces: where a published piece is checked, how large it may be, which are trusted. */
export const pieceEnvFields = {
  PIECE_LOAD_CHECK: z
    .enum(['SANDBOXED', 'UNSANDBOXED'])
    .default('SANDBOXED')
    .describe(
      "Where `POST /v1/pieces` imports a piece's module to check it. `SANDBOXED`: a bubblewrap sandbox (no network, its own PID namespace, read-only files but a private /tmp, no child processes, bounded memory and CPU; it needs `bwrap`, `prlimit` and user namespaces, as `EXECUTION_MODE=SANDBOXED` workers do: docs/operations.md). An app that cannot make the sandbox still starts, logs why, and answers every publish 503 `PIECE_CHECK_UNAVAILABLE` naming the reason; its built-in pieces, which are its own code, are checked without it. `UNSANDBOXED`: a plain child process with an empty environment and Node's permission model, which leaves it the network and the app's processes within its reach: only where every piece publisher is trusted.",
    ),
  TRUSTED_PIECES: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseTrustedPieces(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .describe(
      "Pieces that import Node built-ins and may still run in a worker's reused engine, comma-separated: a name (every version) or `name@version`. A flow version whose pieces all run in a V8 isolate runs in one on `RUN_ISOLATION=isolate` workers (the default); one with a piece that imports a Node built-in runs in a fresh engine process of its own, unless every such piece is listed here: then in the reused engine's realm, where it can reach other runs (docs/guarantees.md). Read when a flow version is first dispatched by this app. Unset: none.",
    ),
  PIECE_ARCHIVE_MAX_BYTES: envFields
    .positiveInt(10 * 1024 * 1024)
    .describe(
      'Largest piece archive `POST /v1/pieces` takes (the `piece.tgz`, before base64); a larger one is refused 400. Archives leave out the pieces framework (the engine has it), so a piece is kilobytes unless it bundles an SDK; 10 MiB takes one bundling a large client library, and the request (base64, a third larger) is held in memory while it is checked.',
    ),
  PIECE_UNPACKED_MAX_BYTES: envFields
    .positiveInt(64 * 1024 * 1024)
    .refine((bytes) => bytes <= ARCHIVE_EXTRACT_LIMITS.maxBytes, {
      message: `must be at most ${ARCHIVE_EXTRACT_LIMITS.maxBytes}, what a worker unpacks`,
    })
    .describe(
      "Largest a piece archive may be unpacked (its files' sizes added up); a larger one is refused 400 at publish, the unpack stopping at the first byte past it. At most 200 MiB, what a worker unpacks. The files are held in memory while the piece's module is load-checked, so this times PIECE_PUBLISH_CONCURRENCY bounds what publishing takes.",
    ),
  PIECE_PUBLISH_CONCURRENCY: envFields
    .positiveInt(2)
    .describe(
      'Piece publishes this app checks at once (unpacking the archive, loading its module in a child process).',
    ),
  PIECE_PUBLISH_MAX_QUEUED: z.coerce
    .number()
    .int()
    .min(0)
    .default(4)
    .describe(
      'Piece publishes that wait for a place when PIECE_PUBLISH_CONCURRENCY are being checked; one more is refused 503 (PIECE_PUBLISH_BUSY). Each waiting request holds its body (up to a third over PIECE_ARCHIVE_MAX_BYTES) in memory.',
    ),
};
