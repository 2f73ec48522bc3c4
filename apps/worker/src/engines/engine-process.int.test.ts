import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeEngineJob } from '@flowbox/engine/testing';
import type { EngineCallback } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { defaultEngineBundle } from '../env.ts';
import { processExists, recordingLogger, silentLogger } from '../test-helpers.ts';
import { startEngineProcess } from './engine-process.ts';

/**
 * A stand-in engine that sends a callback before it says ready and one during its job, and logs
 * each answer it gets; it says ready, and ends its job, only once the answer came.
 */
const CALLING_ENGINE = `
const step = { name: 'trigger', kind: 'test', status: 'SUCCEEDED', input: {}, output: 1, startedAt: new Date().toISOString(), durationMs: 1 };
const callback = { runId: 'run-1', engineToken: 'token-1', report: { version: 1, type: 'steps', steps: [step] } };
let requestId;
process.on('message', (message) => {
  if (message.type === 'execute') {
    requestId = message.requestId;
    process.send({ version: 1, type: 'callback', callId: 2, callback });
  }
  if (message.type !== 'callback-answer') return;
  process.send({ version: 1, type: 'log', level: 'info', msg: 'answered', data: { callId: message.callId, answer: message.answer } });
  if (message.callId === 1) process.send({ version: 1, type: 'ready', pid: process.pid });
  else process.send({
    version: 1, type: 'execute-result', requestId,
    outcome: { status: 'SUCCEEDED', steps: [], logKey: null }, timings: { runMs: 0, logPersistMs: 0 },
  });
});
process.send({ version: 1, type: 'callback', callId: 1, callback });
`;

// Running jobs on an engine is covered end to end in test/job-runner.test.ts.
describe('engine process', () => {
  it('boots the built engine, counts no job yet, and is killed', async () => {
    const engine = await startEngineProcess({ entry: defaultEngineBundle(), logger: silentLogger() });
    try {
      expect(engine.alive).toBe(true);
      expect(engine.jobsServed).toBe(0);
      expect(engine.bootMs).toBeGreaterThan(0);
      expect(processExists(engine.pid)).toBe(true);
    } finally {
      await engine.kill();
    }
    expect(engine.alive).toBe(false);
    expect(processExists(engine.pid)).toBe(false);
  });

  it("forwards the engine's callbacks only while it runs a job, and hands the answer back", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'flowbox-calling-engine-'));
    const entry = path.join(dir, 'engine.mjs');
    await writeFile(entry, CALLING_ENGINE);
    const { logger, lines } = recordingLogger();
    const engine = await startEngineProcess({ entry, logger });
    try {
      const answers = () => lines.filter((line) => line.msg === 'answered');
      // Before any job: refused, and nothing forwarded.
      expect(answers()).toMatchObject([
        {
          callId: 1,
          answer: { type: 'error', error: { code: 'FORBIDDEN', message: 'no job is in progress' } },
        },
      ]);
      const forwarded: EngineCallback[] = [];
      const engineJob = makeEngineJob('http://127.0.0.1:1', 'http://127.0.0.1:1/log', {
        bundlePath: '/none',
        pieces: [],
      });
      const result = await engine.execute(engineJob, async (callback) => {
        forwarded.push(callback);
        return { version: 1, type: 'error', error: { code: 'RUN_ALREADY_FINISHED', message: 'ended' } };
      });
      expect(result.outcome.status).toBe('SUCCEEDED');
      expect(forwarded).toMatchObject([{ runId: 'run-1', engineToken: 'token-1' }]);
      // The app's answer, whatever it says, reached the engine.
      expect(answers()[1]).toMatchObject({
        callId: 2,
        answer: { type: 'error', error: { code: 'RUN_ALREADY_FINISHED', message: 'ended' } },
      });
    } finally {
      await engine.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects with ENGINE_CRASHED when the engine cannot start', async () => {
    await expect(
      startEngineProcess({ entry: '/nonexistent/engine.mjs', logger: silentLogger() }),
    ).rejects.toMatchObject({ code: 'ENGINE_CRASHED' });
  });
});
