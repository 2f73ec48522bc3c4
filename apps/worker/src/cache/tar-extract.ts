import {
  ARCHIVE_EXTRACT_LIMITS,
  type ArchiveExtractLimits,
  ArchiveRefusedError,
  extractArchive as extract,
} from '@flowbox/node-kit/archive-extract';
import { FlowboxError } from '@flowbox/protocol';

/**
 * Unpacks a (gzip'd) tar archive into `dir`, which must be new, with the reader the registry
 * checked it with at publish (@flowbox/node-kit/archive-extract): one absolute path, `..`
 * segment, link or device refuses the whole archive (PROVISION_FAILED), even though tar would
 * merely skip it, because a piece archive like that was not built by flowbox.
 */
export async function extractArchive(
  archive: Buffer,
  dir: string,
  label: string,
  limits: ArchiveExtractLimits = ARCHIVE_EXTRACT_LIMITS,
): Promise<string[]> {
  try {
    return await extract(archive, dir, limits);
  } catch (error) {
    if (error instanceof ArchiveRefusedError) {
      throw new FlowboxError('PROVISION_FAILED', `${label}: ${error.message}`, { cause: error });
    }
    throw new FlowboxError('PROVISION_FAILED', `could not unpack the ${label}: ${String(error)}`, {
      cause: error,
    });
  }
}
