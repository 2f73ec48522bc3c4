import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, type ManagedProcess, spawnManaged } from '@flowbox/local-services';
import { BENCHMARK_FLOW_ID } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf, isRunning } from './faults/processes.ts';

const DEV_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const FLOWBOX_BIN = fileURLToPath(new URL('../../../packages/cli/bin/flowbox', import.meta.url));
/** The bound: after a worker is killed, a sync webhook is answered again within 15 s. */
const ANSWER_WITHIN_SECONDS = 15;
/** The bound for its Redis: killed, `pnpm dev` answers webhooks again within 5 s. */
const REDIS_BACK_WITHIN_MS = 5_000;

/** The dev process's child running `entry` (an app or a worker), by its command line. */
function childRunning(devPid: number, entry: RegExp): number | undefined {
  return childrenOf(devPid).find((pid) => {
    try {
      return entry.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}

async function syncWebhook(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/v1/webhooks/${BENCHMARK_FLOW_ID}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: response.status, body: await response.text() };
}

// `pnpm dev` itself (without the build step, which the test command has done), on embedded
// stores: PGlite, a redis-server from PATH and the in-process S3 server.
describe('pnpm dev supervises its processes', () => {
  let dev: ManagedProcess;
  let dataDir: string;
  let url: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-dev-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    dev = spawnManaged({
      name: 'pnpm dev',
      command: process.execPath,
      args: [DEV_MAIN],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        // A sync answer later than this is a 504, so a 200 below proves the bound.
        WEBHOOK_TIMEOUT_SECONDS: String(ANSWER_WITHIN_SECONDS),
      },
    });
    await dev.waitForLine(/flowbox is up/, 90_000);
  }, 120_000);

  afterAll(async () => {
    const exit = await dev?.stop('SIGTERM', 20_000);
    expect(exit?.code).toBe(0);
    expect(childrenOf(dev.pid)).toEqual([]);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("prints the CLI's exports for its own port, and the CLI reaches the stack with them alone", async () => {
    const exported = async (name: string) => {
      const line = await dev.waitForLine(new RegExp(`^  export ${name}=`), 10_000);
      return line.raw.replace(`  export ${name}=`, '');
    };
    expect(await exported('FLOWBOX_URL')).toBe(url);
    const apiKey = await exported('FLOWBOX_API_KEY');
    // From outside the checkout, so the CLI cannot fall back on its .data/api-key.
    const { stdout } = await promisify(execFile)(process.execPath, [FLOWBOX_BIN, 'flow', 'list'], {
      cwd: dataDir,
      env: { PATH: process.env.PATH ?? '', FLOWBOX_URL: url, FLOWBOX_API_KEY: apiKey },
    });
    expect(stdout).toMatch(new RegExp(`^${BENCHMARK_FLOW_ID}\\s`, 'm'));
  });

  it('starts a SIGKILLed worker again, says why it died, and answers the next webhook', async () => {
    expect(await syncWebhook(url)).toEqual({ status: 200, body: '{"result":6}' });
    const worker = childRunning(dev.pid, /apps\/worker\/src\/main\.ts/);
    expect(worker).toBeDefined();

    process.kill(worker ?? -1, 'SIGKILL');
    const died = await dev.waitForLine((line) => line.json?.process === 'worker-0', 30_000);
    expect(died.json).toMatchObject({ level: 40, exit: 'signal SIGKILL' });
    expect(String(died.json?.msg)).toMatch(/worker-0 died \(signal SIGKILL\); restarting it in \d+ ms/);

    // Sent at once: the job waits in the queue for the restarted worker.
    expect(await syncWebhook(url)).toEqual({ status: 200, body: '{"result":6}' });
    const restarted = childRunning(dev.pid, /apps\/worker\/src\/main\.ts/);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(worker);
    expect(isRunning(worker ?? -1)).toBe(false);
  }, 60_000);

  it('starts its SIGKILLed redis-server again on the same port, and answers webhooks again within 5 s', async () => {
    const redis = childRunning(dev.pid, /redis-server/);
    expect(redis).toBeDefined();
    process.kill(redis ?? -1, 'SIGKILL');
    const killed = performance.now();
    const died = await dev.waitForLine((line) => line.json?.process === 'redis-server', 30_000);
    expect(died.json).toMatchObject({ level: 40, exit: 'signal SIGKILL' });
    expect(String(died.json?.msg)).toMatch(/redis-server died \(signal SIGKILL\); restarting it in \d+ ms/);

    // Answered again, by the same app on a Redis on the same port (the app never restarted).
    let answer = { status: 0, body: '' };
    while (answer.status !== 200 && performance.now() - killed < REDIS_BACK_WITHIN_MS) {
      answer = await syncWebhook(url);
      if (answer.status !== 200) await delay(100);
    }
    expect(answer).toEqual({ status: 200, body: '{"result":6}' });
    const restarted = childRunning(dev.pid, /redis-server/);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(redis);
  }, 60_000);
});
