import type { CallbackAnswer, EngineCallback } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { createIpcAppClient } from './ipc-app-client.ts';

/** A channel that answers every call with `answer` and keeps what it was sent. */
function channelAnswering(answer: CallbackAnswer) {
  const sent: EngineCallback[] = [];
  return {
    sent,
    channel: {
      call: async (callback: EngineCallback) => {
        sent.push(callback);
        return answer;
      },
    },
  };
}

const options = { engineToken: 't', runId: 'run-1', timeoutMs: 1_000 };
const start = { path: 'child', flowId: 'flow-2', input: { a: 1 }, wait: true };

describe('the IPC app client: subflow-start', () => {
  it("sends the report and resolves with the child's run id", async () => {
    const { sent, channel } = channelAnswering({ version: 1, type: 'subflow-started', runId: 'child-1' });
    await expect(createIpcAppClient(channel, options).startSubflow(start)).resolves.toBe('child-1');
    expect(sent[0]?.report).toEqual({ version: 1, type: 'subflow-start', ...start });
  });

  it('keeps a user-family refusal, and makes anything else CALLBACK_FAILED', async () => {
    const deep = channelAnswering({
      version: 1,
      type: 'error',
      error: { code: 'SUBFLOW_TOO_DEEP', message: 'too deep' },
    });
    await expect(createIpcAppClient(deep.channel, options).startSubflow(start)).rejects.toMatchObject({
      code: 'SUBFLOW_TOO_DEEP',
      message: 'too deep',
    });
    const down = channelAnswering({
      version: 1,
      type: 'error',
      error: { code: 'INTERNAL', message: 'db down' },
    });
    await expect(createIpcAppClient(down.channel, options).startSubflow(start)).rejects.toMatchObject({
      code: 'CALLBACK_FAILED',
    });
    const ok = channelAnswering({ version: 1, type: 'ok' });
    await expect(createIpcAppClient(ok.channel, options).startSubflow(start)).rejects.toMatchObject({
      code: 'CALLBACK_FAILED',
    });
  });
});
