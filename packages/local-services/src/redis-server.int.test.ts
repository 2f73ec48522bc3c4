import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execPath } from 'node:process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isPortFree } from './free-port.ts';
import { MissingBinaryError } from './local-service.ts';
import { startRedisServer } from './redis-server.ts';
import { closed, isAlive, openSocket, processState, redisCommand } from './test-helpers.ts';

describe('startRedisServer', () => {
  it('starts on a free port, answers PING without persistence or eviction, and frees the port on close', async () => {
    const redis = await startRedisServer({});
    try {
      expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
      expect(await redisCommand(redis.port, 'PING')).toBe('+PONG\r\n');
      expect(await redisCommand(redis.port, 'CONFIG GET maxmemory-policy')).toContain('noeviction');
      expect(await redisCommand(redis.port, 'CONFIG GET save')).toMatch(/\$0\r\n\r\n$/);
      expect(await redisCommand(redis.port, 'CONFIG GET appendonly')).toContain('no');
    } finally {
      await redis.close();
    }
    expect(await isPortFree(redis.port)).toBe(true);
    expect(isAlive(redis.pid ?? -1)).toBe(false);
    await redis.close(); // a second close is harmless
  });

  it('restarts on the same port keeping its data (appendOnly), and freezes and thaws on pause and resume', async () => {
    const redis = await startRedisServer({ appendOnly: true });
    onTestFinished(() => redis.close());
    expect(await redisCommand(redis.port, 'SET kept 1')).toBe('+OK\r\n');
    const firstPid = redis.pid;
    await redis.stop();
    expect(redis.running).toBe(false);
    expect(isAlive(firstPid ?? -1)).toBe(false);
    expect(await isPortFree(redis.port)).toBe(true);
    await redis.start();
    expect(redis.pid).not.toBe(firstPid);
    expect(await redisCommand(redis.port, 'GET kept')).toBe('$1\r\n1\r\n');
    expect(await redisCommand(redis.port, 'CONFIG GET maxmemory-policy')).toContain('noeviction');

    redis.pause();
    // Frozen (state T): the kernel still accepts connections, but nothing answers until resume.
    await expect.poll(() => processState(redis.pid ?? -1)).toBe('T');
    const connection = await openSocket(redis.port);
    const replied = new Promise<string>((resolve) =>
      connection.once('data', (chunk) => resolve(String(chunk))),
    );
    connection.write('PING\r\n');
    redis.resume();
    expect(await replied).toBe('+PONG\r\n');
    connection.destroy();
  });

  it('throws MissingBinaryError with install instructions when redis-server is not installed', async () => {
    const error = await startRedisServer({ binary: '/nonexistent/redis-server' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingBinaryError);
    expect(String(error)).toContain('sudo apt-get install -y redis-server');
  });

  it('does not outlive a parent that is killed with SIGKILL', async () => {
    const moduleUrl = new URL('./redis-server.ts', import.meta.url).href;
    // The killed parent cannot remove a temporary directory, so this test owns it.
    const dataDir = await mkdtemp(join(tmpdir(), 'flowbox-redis-test-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    const script = `
      const { startRedisServer } = await import(${JSON.stringify(moduleUrl)});
      const redis = await startRedisServer({ dataDir: ${JSON.stringify(dataDir)} });
      process.stdout.write(JSON.stringify({ port: redis.port, pid: redis.pid }) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      parent.stdout.setEncoding('utf8');
      parent.stdout.on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) resolve(out.trim());
      });
      parent.once('exit', (code) => reject(new Error(`parent exited early (${code})`)));
    });
    const { port } = JSON.parse(line) as { port: number; pid: number };
    const connection = await openSocket(port);
    const serverGone = closed(connection);
    parent.kill('SIGKILL');
    await serverGone;
    expect(await isPortFree(port)).toBe(true);
  });
});
