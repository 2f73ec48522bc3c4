import { describe, expect, it } from 'vitest';
import { downloadVerified, type FetchFn, sha256Hex } from './artifact-download.ts';

const bytes = Buffer.from('{"hello":"world"}');
const serve =
  (body: Buffer | string, status = 200): FetchFn =>
  async () =>
    new Response(body, { status });
const artifact = {
  url: 'http://127.0.0.1:1/a?X-Amz-Signature=secret',
  sha256: sha256Hex(bytes),
  sizeBytes: bytes.byteLength,
};

describe('downloadVerified', () => {
  it('returns the bytes when size and hash match', async () => {
    const got = await downloadVerified({
      fetch: serve(bytes),
      artifact,
      label: 'flow bundle x',
      timeoutMs: 1_000,
    });
    expect(got.equals(bytes)).toBe(true);
  });

  it('names both hashes on a mismatch, and never the signed URL', async () => {
    const other = Buffer.from('{"hello":"WORLD"}');
    const failure = downloadVerified({
      fetch: serve(other),
      artifact,
      label: 'flow bundle x',
      timeoutMs: 1_000,
    });
    await expect(failure).rejects.toMatchObject({ code: 'ARTIFACT_INTEGRITY' });
    const error = (await failure.then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain(artifact.sha256);
    expect(error.message).toContain(sha256Hex(other));
    expect(error.message).not.toContain('secret');
  });

  it('refuses more or fewer bytes than recorded', async () => {
    for (const body of [Buffer.concat([bytes, bytes]), bytes.subarray(1)]) {
      await expect(
        downloadVerified({ fetch: serve(body), artifact, label: 'x', timeoutMs: 1_000 }),
      ).rejects.toMatchObject({
        code: 'ARTIFACT_INTEGRITY',
        message: expect.stringMatching(/size mismatch/),
      });
    }
  });

  it('turns an HTTP error or a network failure into PROVISION_FAILED', async () => {
    await expect(
      downloadVerified({ fetch: serve('denied', 403), artifact, label: 'x', timeoutMs: 1_000 }),
    ).rejects.toMatchObject({ code: 'PROVISION_FAILED', message: expect.stringMatching(/HTTP 403/) });
    const refused: FetchFn = async () => {
      throw new TypeError('fetch failed');
    };
    await expect(
      downloadVerified({ fetch: refused, artifact, label: 'x', timeoutMs: 1_000 }),
    ).rejects.toMatchObject({ code: 'PROVISION_FAILED' });
  });
});
