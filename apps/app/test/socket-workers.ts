import { io, type Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import type { AppConfig } from '../src/env.ts';
import { startTestApp } from './app-harness.ts';

/**
 * One in-process app per test file, and workers' sockets to it: each connects as a real worker
 * does (websocket only, a worker token) and is closed after its test.
 */
export function useWorkerProtocolApp(env: Record<string, string> = {}): {
  readonly app: FlowboxApp;
  readonly url: string;
  readonly config: AppConfig;
  connectWorker(token: string): Promise<Socket>;
} {
  let started: { app: FlowboxApp; url: string; config: AppConfig } | undefined;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    started = await startTestApp(env);
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.disconnect();
  });
  afterAll(async () => {
    await started?.app.close();
  });
  const current = () => {
    if (started === undefined) throw new Error('the app starts in beforeAll');
    return started;
  };
  return {
    get app() {
      return current().app;
    },
    get url() {
      return current().url;
    },
    get config() {
      return current().config;
    },
    async connectWorker(token) {
      const socket = io(current().url, { auth: { token }, transports: ['websocket'], reconnection: false });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
      return socket;
    },
  };
}
