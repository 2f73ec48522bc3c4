import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultToolsDir, findVersitygw } from './find-binary.ts';
import { isPortFree } from './free-port.ts';
import { MissingBinaryError } from './local-service.ts';
import { expectObjectRoundTrips, tamperSignature } from './s3-test-helpers.ts';
import { isAlive, processState } from './test-helpers.ts';
import { startVersitygw, type VersitygwServer } from './versitygw.ts';

const credentials = { accessKeyId: 'local-test', secretAccessKey: 'local-test-secret-0123456789' };

describe('startVersitygw', () => {
  // check-test-tools.ts builds versitygw before the tests run; this is a test's own entry point.
  const binary = findVersitygw({
    pathEnv: process.env.PATH,
    toolsDir: process.env.FLOWBOX_TOOLS_DIR ?? defaultToolsDir(),
  });
  let dir: string;
  let gateway: VersitygwServer;

  beforeAll(async () => {
    if (binary === null) throw new Error('versitygw is missing: run `node scripts/check-test-tools.ts`');
    dir = await mkdtemp(join(tmpdir(), 'flowbox-vgw-test-'));
    gateway = await startVersitygw({ dataDir: join(dir, 's3'), bucket: 'runs', binary, ...credentials });
  });

  afterAll(async () => {
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores and serves objects through the SDK and through presigned URLs', async () => {
    expect(gateway.endpoint).toBe(`http://127.0.0.1:${gateway.port}`);
    await expectObjectRoundTrips(
      { endpoint: gateway.endpoint, region: gateway.region, ...credentials },
      'runs',
    );
  });

  it('rejects a tampered presigned URL, an anonymous request and a wrong secret with 403', async () => {
    const config = { endpoint: gateway.endpoint, region: gateway.region, ...credentials };
    const getUrl = await expectObjectRoundTrips(config, 'runs');
    expect((await fetch(tamperSignature(getUrl))).status).toBe(403);
    const otherKey = getUrl.replace('presigned/log.json', 'sdk/object.txt');
    expect((await fetch(otherKey)).status).toBe(403);
    expect((await fetch(`${gateway.endpoint}/runs/presigned/log.json`)).status).toBe(403);
    const wrongSecret = { ...config, secretAccessKey: 'not-the-secret-0123456789' };
    await expect(expectObjectRoundTrips(wrongSecret, 'runs')).rejects.toThrow();
  });

  it('stops on close: process gone, port free', async () => {
    const other = await startVersitygw({ dataDir: join(dir, 'other'), binary: binary ?? '', ...credentials });
    await other.close();
    expect(isAlive(other.pid ?? -1)).toBe(false);
    expect(await isPortFree(other.port)).toBe(true);
  });

  it('restarts on the same port with its buckets and objects, and thaws after a pause', async () => {
    const config = { endpoint: gateway.endpoint, region: gateway.region, ...credentials };
    const getUrl = await expectObjectRoundTrips(config, 'runs');
    const firstPid = gateway.pid;
    await gateway.stop();
    expect(isAlive(firstPid ?? -1)).toBe(false);
    await expect(fetch(getUrl)).rejects.toThrow();
    await gateway.start();
    expect(gateway.pid).not.toBe(firstPid);
    expect(await (await fetch(getUrl)).text()).toBe('{"ok":true}');

    gateway.pause();
    await expect.poll(() => processState(gateway.pid ?? -1)).toBe('T');
    const answer = fetch(getUrl);
    gateway.resume();
    expect((await answer).status).toBe(200);
  });

  it('throws MissingBinaryError with build instructions when versitygw is not installed', async () => {
    const error = await startVersitygw({
      dataDir: join(dir, 'x'),
      binary: '/nonexistent/versitygw',
      ...credentials,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingBinaryError);
    expect(String(error)).toContain('go install github.com/versity/versitygw/cmd/versitygw@v1.8.0');
  });
});
