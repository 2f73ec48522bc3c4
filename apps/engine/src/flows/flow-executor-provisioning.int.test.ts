import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { isUpload, makeEngineJob, prepareEngineArtifacts, SEEDED_FLOW } from '../../test/support/index.ts';

const h = useExecutorHarness();

describe('flow executor: what the worker provisioned', () => {
  it('ends INTERNAL_ERROR with PROVISION_FAILED, and still stores the log, when the bundle is missing', async () => {
    const { outcome } = await h.executor.execute(
      await h.job(SEEDED_FLOW, { bundlePath: join(h.dir, 'missing.json') }),
    );

    expect(outcome).toMatchObject({ status: 'INTERNAL_ERROR', logKey: 'runs/run-1.json' });
    expect(outcome.error).toMatchObject({ code: 'PROVISION_FAILED', message: /missing\.json/ });
    expect(h.stepReports()).toEqual([]);
    expect(h.app.requests.filter(isUpload)).toHaveLength(1);
  });

  it('refuses a bundle that is not a flow bundle, or that holds another flow version', async () => {
    const bad = join(h.dir, 'not-a-bundle.json');
    await writeFile(bad, JSON.stringify({ version: 1, flowId: 'flow-1' }));
    const { outcome: invalid } = await h.executor.execute(await h.job(SEEDED_FLOW, { bundlePath: bad }));
    expect(invalid.error).toMatchObject({ code: 'PROVISION_FAILED', message: /invalid flow bundle/ });

    const { outcome: other } = await h.executor.execute(
      await h.job(SEEDED_FLOW, { flowVersionId: 'flow-version-2' }),
    );
    expect(other.error).toMatchObject({
      code: 'PROVISION_FAILED',
      message: /flow-version-1, not flow-1\/flow-version-2/,
    });
  });

  it('refuses a piece whose directory holds something else than the job says', async () => {
    const artifacts = await prepareEngineArtifacts(h.dir);
    const pieces = artifacts.pieces.map((piece) =>
      piece.name === 'webhook' ? { ...piece, version: '9.9.9' } : piece,
    );
    const { outcome } = await h.executor.execute(
      makeEngineJob(h.app.url, h.app.logUploadUrl('k'), { bundlePath: artifacts.bundlePath, pieces }),
    );
    expect(outcome.error).toMatchObject({ code: 'PROVISION_FAILED', message: /not webhook@9\.9\.9/ });
  });

  it('refuses a job that does not provide a piece the bundle names', async () => {
    const artifacts = await prepareEngineArtifacts(h.dir);
    const pieces = artifacts.pieces.filter((piece) => piece.name !== 'math-helper');
    const { outcome } = await h.executor.execute(
      makeEngineJob(h.app.url, h.app.logUploadUrl('k'), { bundlePath: artifacts.bundlePath, pieces }),
    );
    expect(outcome.error).toMatchObject({ code: 'PROVISION_FAILED', message: /needs math-helper@/ });
  });

  it('refuses a piece directory without a valid manifest', async () => {
    const broken = join(h.dir, 'broken-piece');
    await mkdir(broken, { recursive: true });
    await writeFile(join(broken, 'manifest.json'), JSON.stringify({ name: 'webhook', entry: 'main.js' }));
    const artifacts = await prepareEngineArtifacts(h.dir);
    const pieces = artifacts.pieces.map((piece) =>
      piece.name === 'webhook' ? { ...piece, dir: broken } : piece,
    );
    const { outcome } = await h.executor.execute(
      makeEngineJob(h.app.url, h.app.logUploadUrl('k'), { bundlePath: artifacts.bundlePath, pieces }),
    );
    expect(outcome.error).toMatchObject({ code: 'PROVISION_FAILED', message: /invalid manifest\.json/ });
  });

  it('reads a bundle once: a warm engine runs it again without the file', async () => {
    const first = await h.job();
    expect((await h.executor.execute(first)).outcome.status).toBe('SUCCEEDED');
    await rm(first.bundlePath);
    expect((await h.executor.execute(first)).outcome.status).toBe('SUCCEEDED');
  });

  it('preloads pieces: a job finds them loaded though their directories are gone', async () => {
    const job = await h.job();
    await h.executor.preload({ pieces: job.pieces });
    for (const piece of job.pieces) await rm(piece.dir, { recursive: true });
    expect((await h.executor.execute(job)).outcome.status).toBe('SUCCEEDED');
  });

  it('preloads what it can and never fails: a broken piece fails only the job that needs it', async () => {
    const job = await h.job();
    const missing = job.pieces.map((piece) => ({ ...piece, dir: `${piece.dir}-missing` }));
    await expect(h.executor.preload({ pieces: missing })).resolves.toBeUndefined();
    const { outcome } = await h.executor.execute({ ...job, pieces: missing });
    expect(outcome.error?.code).toBe('PROVISION_FAILED');
  });

  it("primes before a job: one GET of the app's liveness route, no job data, and the job still runs", async () => {
    const job = await h.job();
    await h.executor.preload({ pieces: job.pieces, codeStepMemoryMb: 64, appUrl: h.app.url });
    expect(h.app.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /health/live']);
    expect(h.app.requests[0]?.headers.authorization).toBeUndefined();
    expect((await h.executor.execute(job)).outcome.status).toBe('SUCCEEDED');
  });

  it('priming never fails the engine: an unreachable app only costs the primed connection', async () => {
    const job = await h.job();
    await expect(
      h.executor.preload({ pieces: job.pieces, codeStepMemoryMb: 64, appUrl: 'http://127.0.0.1:1' }),
    ).resolves.toBeUndefined();
    expect((await h.executor.execute(job)).outcome.status).toBe('SUCCEEDED');
  });
});
