import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * In a fresh Node process, counts the OpenTelemetry SDK modules loaded by importing what the
 * app's and the worker's main import, then by starting (and closing) a tracer. The API package
 * (@opentelemetry/api, no SDK: its calls do nothing until an SDK registers) is not counted:
 * prom-client's process CPU metric loads it whether tracing is on or not.
 */
const SCRIPT = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    if (url.includes('/node_modules/@opentelemetry/') && !url.includes('/@opentelemetry/api/')) loaded.add(url);
    return next(url, context);
  },
});
await import(${JSON.stringify(join(ROOT, 'apps/app/src/app.ts'))});
await import(${JSON.stringify(join(ROOT, 'apps/worker/src/worker.ts'))});
const { startTracing } = await import(${JSON.stringify(join(ROOT, 'packages/tracing/src/index.ts'))});
const before = loaded.size;
const tracer = await startTracing({ endpoint: 'http://127.0.0.1:9', serviceName: 'probe', logger: { warn() {} } });
await tracer.close();
process.stdout.write(JSON.stringify({ before, after: loaded.size }));
`;

function run(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('tracing off costs no OpenTelemetry SDK', () => {
  it('loads none with the app and the worker, and the SDK only when a tracer starts', async () => {
    const { code, stdout, stderr } = await run();
    expect(code, stderr).toBe(0);
    const counts = JSON.parse(stdout) as { before: number; after: number };
    expect(counts.before).toBe(0);
    // The probe itself is live: starting a tracer does load the SDK.
    expect(counts.after).toBeGreaterThan(5);
  });
});
