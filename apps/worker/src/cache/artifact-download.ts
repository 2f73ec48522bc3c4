import { createHash } from 'node:crypto';
import { type ArtifactDownload, FlowboxError } from '@flowbox/protocol';

/** The HTTP client the provisioner fetches artifacts with; injected so tests can count requests. */
export type FetchFn = (url: string, init: { signal: AbortSignal }) => Promise<Response>;

export interface DownloadOptions {
  fetch: FetchFn;
  artifact: ArtifactDownload;
  /** Names the artifact in errors, e.g. `flow bundle fv-1`; never the URL, which carries a signature. */
  label: string;
  timeoutMs: number;
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * GETs an artifact through its presigned URL and returns its bytes once their size and sha256
 * are the ones the app recorded. Held in memory (artifacts are small), so nothing touches the
 * disk before it is verified. ARTIFACT_INTEGRITY on a mismatch, PROVISION_FAILED otherwise.
 */
export async function downloadVerified(options: DownloadOptions): Promise<Buffer> {
  const { artifact, label } = options;
  let response: Response;
  try {
    response = await options.fetch(artifact.url, { signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (error) {
    throw new FlowboxError('PROVISION_FAILED', `could not fetch the ${label}: ${String(error)}`, {
      cause: error,
    });
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    throw new FlowboxError('PROVISION_FAILED', `could not fetch the ${label}: HTTP ${response.status}`);
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for await (const chunk of response.body) {
      received += chunk.byteLength;
      // Stop reading at the first byte past the recorded size rather than fill memory.
      if (received > artifact.sizeBytes) break;
      chunks.push(chunk);
    }
  } catch (error) {
    throw new FlowboxError('PROVISION_FAILED', `could not read the ${label}: ${String(error)}`, {
      cause: error,
    });
  }
  if (received !== artifact.sizeBytes) {
    throw new FlowboxError(
      'ARTIFACT_INTEGRITY',
      `${label}: size mismatch: expected ${artifact.sizeBytes} bytes, got ${received > artifact.sizeBytes ? 'more' : received}`,
    );
  }
  const bytes = Buffer.concat(chunks);
  const actual = sha256Hex(bytes);
  if (actual !== artifact.sha256) {
    throw new FlowboxError(
      'ARTIFACT_INTEGRITY',
      `${label}: sha256 mismatch: expected ${artifact.sha256}, got ${actual}; refused, not cached`,
    );
  }
  return bytes;
}
