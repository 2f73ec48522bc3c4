import { PieceRefSchema } from '@flowbox/protocol';

/** TRUSTED_PIECES as parsed: a piece name (every version), or one `name@version`. */
export interface TrustedPiece {
  name: string;
  /** Null: every version of the piece. */
  version: string | null;
}

/**
 * Parses TRUSTED_PIECES (`name[@version],...`, blanks ignored); throws naming the first entry
 * that is not a piece name, optionally with a version.
 */
export function parseTrustedPieces(text: string): TrustedPiece[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return entries.map((entry) => {
    const at = entry.indexOf('@');
    const name = at === -1 ? entry : entry.slice(0, at);
    const version = at === -1 ? null : entry.slice(at + 1);
    const parsed = PieceRefSchema.safeParse({ name, version: version ?? '0.0.0' });
    if (!parsed.success) {
      throw new Error(
        `"${entry}" is not a piece name, or a piece name @ an exact version (e.g. gmail@1.2.0)`,
      );
    }
    return { name, version };
  });
}

/** Whether the operator listed this piece version as trusted. */
export function isTrusted(
  trusted: readonly TrustedPiece[],
  piece: { name: string; version: string },
): boolean {
  return trusted.some((t) => t.name === piece.name && (t.version === null || t.version === piece.version));
}
