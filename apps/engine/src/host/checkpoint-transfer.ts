import { type Checkpoint, CheckpointSchema, FlowboxError, type LogUpload } from '@flowbox/protocol';
import type { HttpClient } from './http-client.ts';
import { uploadJson } from './log-uploader.ts';

/**
 * A resumed run's checkpoint, read through its presigned GET; any failure (the network, a status,
 * a body that is not a checkpoint) is CHECKPOINT_FAILED, which the app retries.
 */
export async function downloadCheckpoint(
  http: HttpClient,
  url: string,
  maxBytes: number,
  timeoutMs: number,
): Promise<Checkpoint> {
  let status: number;
  let body: string;
  try {
    const response = await http.request({
      method: 'GET',
      url,
      headers: {},
      body: '',
      timeoutMs,
      maxBodyBytes: maxBytes,
    });
    status = response.status;
    body = response.body ?? response.bodyExcerpt;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlowboxError('CHECKPOINT_FAILED', `the checkpoint could not be read: ${message}`, {
      cause: error,
    });
  }
  if (status !== 200) {
    throw new FlowboxError(
      'CHECKPOINT_FAILED',
      `the checkpoint's download answered ${status}: ${body.slice(0, 500)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new FlowboxError('CHECKPOINT_FAILED', 'the checkpoint is not JSON');
  }
  const checked = CheckpointSchema.safeParse(parsed);
  if (!checked.success) {
    throw new FlowboxError(
      'CHECKPOINT_FAILED',
      `the checkpoint is malformed: ${checked.error.message.slice(0, 500)}`,
    );
  }
  return checked.data;
}

/** Stores a pausing run's checkpoint through the job's presigned POST form; a failure is CHECKPOINT_FAILED. */
export function uploadCheckpoint(
  http: HttpClient,
  target: LogUpload,
  checkpoint: Checkpoint,
  timeoutMs: number,
): Promise<void> {
  return uploadJson(http, target, checkpoint, timeoutMs, { what: 'checkpoint', code: 'CHECKPOINT_FAILED' });
}
