import { FlowboxError, type RunLog } from '@flowbox/protocol';
import type { HttpClient } from './http-client.ts';

export interface LogUploadTarget {
  /** Presigned PUT URL. */
  url: string;
  maxBytes: number;
}

/** PUTs the run log as JSON to its presigned URL; any failure is `LOG_UPLOAD_FAILED`. */
export async function uploadRunLog(
  http: HttpClient,
  target: LogUploadTarget,
  log: RunLog,
  timeoutMs: number,
): Promise<void> {
  const body = JSON.stringify(log);
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > target.maxBytes) {
    throw new FlowboxError(
      'LOG_UPLOAD_FAILED',
      `run log is ${bytes} bytes, over the ${target.maxBytes} limit`,
    );
  }
  let status: number;
  let excerpt: string;
  try {
    const response = await http.request({
      method: 'PUT',
      url: target.url,
      headers: { 'content-type': 'application/json' },
      body,
      timeoutMs,
    });
    status = response.status;
    excerpt = response.bodyExcerpt;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlowboxError('LOG_UPLOAD_FAILED', `run log upload failed: ${message}`, { cause: error });
  }
  if (status < 200 || status > 299) {
    throw new FlowboxError(
      'LOG_UPLOAD_FAILED',
      `run log upload answered ${status}: ${excerpt.slice(0, 500)}`,
    );
  }
}
