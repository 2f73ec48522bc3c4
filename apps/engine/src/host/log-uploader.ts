import { randomUUID } from 'node:crypto';
import { type ErrorCode, FlowboxError, type LogUpload, type RunLog } from '@flowbox/protocol';
import type { HttpClient } from './http-client.ts';

/**
 * Stores the run log through its presigned POST upload; any failure is `LOG_UPLOAD_FAILED`.
 * A log over `maxBytes` is refused here, and would be by the S3 server too (the signed policy
 * bounds the size), so a hostile engine cannot store more than a log's worth either.
 */
export function uploadRunLog(
  http: HttpClient,
  target: LogUpload,
  log: RunLog,
  timeoutMs: number,
): Promise<void> {
  return uploadJson(http, target, log, timeoutMs, { what: 'run log', code: 'LOG_UPLOAD_FAILED' });
}

/**
 * Stores `value` as JSON through a presigned POST form (a run log, a checkpoint); any failure is
 * `failure.code`, its message naming `failure.what`.
 */
export async function uploadJson(
  http: HttpClient,
  target: LogUpload,
  value: unknown,
  timeoutMs: number,
  failure: { what: string; code: ErrorCode },
): Promise<void> {
  const { what, code } = failure;
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > target.maxBytes) {
    throw new FlowboxError(code, `${what} is ${bytes} bytes, over the ${target.maxBytes} limit`);
  }
  const boundary = `flowbox-${randomUUID()}`;
  let status: number;
  let excerpt: string;
  try {
    const response = await http.request({
      method: 'POST',
      url: target.url,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: multipartForm(boundary, target.fields, json),
      timeoutMs,
    });
    status = response.status;
    excerpt = response.bodyExcerpt;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlowboxError(code, `${what} upload failed: ${message}`, { cause: error });
  }
  if (status < 200 || status > 299) {
    throw new FlowboxError(code, `${what} upload answered ${status}: ${excerpt.slice(0, 500)}`);
  }
}

/** The form S3's POST upload expects: the policy's fields in order, the content last as `file`. */
function multipartForm(boundary: string, fields: Record<string, string>, json: string): string {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="log.json"\r\n` +
      `Content-Type: application/json\r\n\r\n${json}\r\n--${boundary}--\r\n`,
  );
  return parts.join('');
}
