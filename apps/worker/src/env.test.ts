import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './env.ts';

describe('worker config', () => {
  it('applies defaults', () => {
    const config = loadConfig({ APP_URL: 'http://127.0.0.1:3000', WORKER_TOKEN: 'secret' });
    expect(config).toMatchObject({
      appUrl: 'http://127.0.0.1:3000',
      workerToken: 'secret',
      logLevel: 'info',
    });
    expect(config.workerId).toMatch(new RegExp(`-${process.pid}$`));
    expect(config.engineEntry).toMatch(/apps[/\\]engine[/\\]src[/\\]main\.ts$/);
    expect(existsSync(config.engineEntry)).toBe(true);
  });

  it('takes explicit values', () => {
    const config = loadConfig({
      APP_URL: 'http://app:3000',
      WORKER_TOKEN: 't',
      WORKER_ID: 'w-1',
      LOG_LEVEL: 'debug',
      ENGINE_ENTRY: 'engine.js',
    });
    expect(config).toMatchObject({
      workerId: 'w-1',
      logLevel: 'debug',
      engineEntry: path.resolve('engine.js'),
    });
  });

  it('names missing and invalid variables without echoing the token', () => {
    expect(() => loadConfig({ APP_URL: 'not a url', WORKER_TOKEN: '' })).toThrow(
      /APP_URL[\s\S]*WORKER_TOKEN/,
    );
  });
});
