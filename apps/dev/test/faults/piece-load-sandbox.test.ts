// A hostile piece's top level, run by the app's load check at `POST /v1/pieces`, against a real
// app process: the check runs in a bubblewrap sandbox (PIECE_LOAD_CHECK=SANDBOXED, the default),
// so signals, files, listeners, lookups and allocations from it reach nothing of the app or the
// host. Without bubblewrap the app still starts (its built-in pieces are its own code) and
// refuses publishes with 503 PIECE_CHECK_UNAVAILABLE.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../../test/fixtures.ts';
import { manage } from '../../../app/test/app-harness.ts';
import { goodPiece, manifestOf, publishBody } from '../../../app/test/piece-archives.ts';
import { startStack } from '../../src/stack.ts';
import { type FaultStack, isRunning, startFaultStack } from './fault-harness.ts';

const REPO_ROOT = join(import.meta.dirname, '..', '..', '..', '..');

/**
 * A piece whose top level runs `attack` (statements that set `probe`, a string) and which shows
 * `probe` as its action's description, so the publish answer says what the attack saw.
 */
function hostilePiece(name: string, attack: string) {
  const piece = { name, version: '1.0.0' };
  const source = [
    "import { createAction, createPiece } from '@flowbox/pieces-framework';",
    "let probe = 'unset';",
    'const using = (name) => process.getBuiltinModule(name);',
    "const outcome = (run) => { try { return String(run()); } catch (error) { return (error.code ?? error.name) + ': ' + error.message; } };",
    attack,
    'export default createPiece({',
    `  name: ${JSON.stringify(name)}, version: '1.0.0',`,
    '  actions: [createAction({ name: "greet", description: probe, props: {}, run: () => ({}) })],',
    '});',
  ].join('\n');
  return publishBody(piece, [{ name: 'index.mjs', data: source }], manifestOf(piece));
}

interface Published {
  status: number;
  code: string | undefined;
  message: string | undefined;
  probe: string | undefined;
}

async function publish(url: string, apiKey: string, body: unknown): Promise<Published> {
  const response = await manage(url, 'POST', '/v1/pieces', body, apiKey);
  const json = (await response.json()) as {
    piece?: { actions?: Array<{ description: string }> };
    error?: { code: string; message: string };
  };
  return {
    status: response.status,
    code: json.error?.code,
    message: json.error?.message,
    probe: json.piece?.actions?.[0]?.description,
  };
}

describe("a hostile piece's top level in the app's load check (PIECE_LOAD_CHECK=SANDBOXED)", () => {
  let fault: FaultStack;
  let appPid: number;
  let hostDir: string;
  let listener: Server;
  let listenerPort: number;
  let connections = 0;

  beforeAll(async () => {
    fault = await startFaultStack({ workers: 0 });
    appPid = fault.stack.apps[0]?.pid ?? -1;
    hostDir = await mkdtemp(join(tmpdir(), 'flowbox-load-check-host-'));
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
    await rm(hostDir, { recursive: true, force: true });
    await fault?.close();
  });

  /** The app process is the one that started, it answers ready, and it still publishes pieces. */
  async function appServes(): Promise<void> {
    expect(isRunning(appPid)).toBe(true);
    expect(fault.stack.apps[0]?.pid).toBe(appPid);
    expect((await fetch(`${fault.url}/health/ready`)).status).toBe(200);
    const good = await publish(
      fault.url,
      fault.stack.apiKey,
      goodPiece({ name: `after-${randomUUID().slice(0, 8)}`, version: '1.0.0' }),
    );
    expect(good.status).toBe(201);
  }

  it("signals its parent and the app's pid: nothing of the app is in its PID namespace", async () => {
    const answer = await publish(
      fault.url,
      fault.stack.apiKey,
      hostilePiece(
        'kill-parent',
        `probe = [
          'ppid ' + process.ppid,
          outcome(() => { process.kill(${appPid}, 'SIGTERM'); return 'app signalled'; }),
          outcome(() => { process.kill(process.ppid, 'SIGTERM'); return 'parent signalled'; }),
        ].join(' | ');`,
      ),
    );
    // The sandbox's init ignores a signal from inside its namespace; the app's pid is not there.
    expect(answer.status).toBe(201);
    expect(answer.probe).toMatch(/^ppid 1 \| ESRCH: kill ESRCH \| parent signalled$/);
    await appServes();
  });

  it('attaches SQLite databases outside its directory: no file is created', async () => {
    const outside = [
      join(hostDir, 'attached.db'),
      join(REPO_ROOT, 'node_modules', `.attached-${randomUUID()}.db`),
    ];
    try {
      const answer = await publish(
        fault.url,
        fault.stack.apiKey,
        hostilePiece(
          'sqlite-attach',
          `const { DatabaseSync } = using('node:sqlite');
          probe = ${JSON.stringify(outside)}.map((file) => outcome(() => {
            new DatabaseSync(':memory:').exec("ATTACH DATABASE '" + file + "' AS x; CREATE TABLE x.t (a)");
            return 'created';
          })).join(' | ');`,
        ),
      );
      expect(answer.status).toBe(201);
      expect(answer.probe).not.toMatch(/created/);
      for (const file of outside) expect(existsSync(file), file).toBe(false);
    } finally {
      for (const file of outside) await unlink(file).catch(() => {});
    }
    await appServes();
  });

  it('opens a listener and looks up names: no network but its own loopback, and no listener on the host', async () => {
    const answer = await publish(
      fault.url,
      fault.stack.apiKey,
      hostilePiece(
        'listen-lookup',
        `const net = using('node:net');
        probe = [
          Object.keys(using('node:os').networkInterfaces()).join(','),
          outcome(() => { const server = new net.Server(); server._listen2('127.0.0.1', ${listenerPort}, 4, -1); return server._handle ? 'listening' : 'not listening'; }),
          outcome(() => { using('node:dns').lookupService('127.0.0.1', 22, () => {}); return 'looked up'; }),
          outcome(() => { new net.Socket().connect(${listenerPort}, '127.0.0.1'); return 'connecting'; }),
        ].join(' | ');`,
      ),
    );
    expect(answer.status).toBe(201);
    const [interfaces, ...attempts] = (answer.probe ?? '').split(' | ');
    // No interface but loopback: the patched calls below aside, nothing it finds can leave.
    expect(interfaces).toBe('lo');
    for (const attempt of attempts) expect(attempt).toMatch(/^ERR_ACCESS_DENIED/);
    expect(connections).toBe(0);
    await appServes();
  });

  it('reserves 4 GB: refused at its memory bound, and the app is untouched', async () => {
    const answer = await publish(
      fault.url,
      fault.stack.apiKey,
      hostilePiece(
        'hoard',
        'const kept = []; for (let i = 0; i < 40; i++) kept.push(Buffer.allocUnsafeSlow(100 * 1024 * 1024)); probe = String(kept.length);',
      ),
    );
    expect(answer).toMatchObject({ status: 400, code: 'INVALID_PIECE' });
    expect(answer.message).toMatch(/the module throws at load: RangeError|exit SIG/);
    await appServes();
  });

  it("reads its environment, the app's and the host's temporary files: nothing of the app's", async () => {
    const answer = await publish(
      fault.url,
      fault.stack.apiKey,
      hostilePiece(
        'snoop',
        `const fs = using('node:fs');
        probe = [
          Object.keys(process.env).join(',') || 'no environment',
          outcome(() => fs.readFileSync('/proc/${appPid}/environ', 'utf8').length),
          outcome(() => fs.readdirSync(${JSON.stringify(tmpdir())}).length),
        ].join(' | ');`,
      ),
    );
    expect(answer.status).toBe(201);
    const [environment, appEnviron, hostTmp] = (answer.probe ?? '').split(' | ');
    expect(environment).toBe('no environment');
    expect(appEnviron).toMatch(/^ERR_ACCESS_DENIED/);
    expect(hostTmp).toMatch(/^ERR_ACCESS_DENIED/);
  });
});

describe('PIECE_LOAD_CHECK=SANDBOXED on a machine without bubblewrap', () => {
  let noBwrap: string;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // A PATH with prlimit but no bwrap.
    noBwrap = await mkdtemp(join(tmpdir(), 'flowbox-no-bwrap-'));
    await symlink('/usr/bin/prlimit', join(noBwrap, 'prlimit'));
  });

  afterAll(async () => {
    await close?.();
    await rm(noBwrap, { recursive: true, force: true });
  });

  it('starts with its built-in pieces, and answers publishes 503 PIECE_CHECK_UNAVAILABLE naming why', async () => {
    const dataDir = join(noBwrap, 'stack');
    const stack = await startStack({
      dataDir,
      apps: 1,
      workers: 0,
      port: 0,
      logLevel: 'info',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket: await createTestBucket() },
      appEnv: { REDIS_PREFIX: testNamespace() },
      baseEnv: { ...process.env, PATH: noBwrap },
    });
    close = () => stack.close();
    const url = stack.appUrls[0] ?? '';
    const listed = (await (await manage(url, 'GET', '/v1/pieces', undefined, stack.apiKey)).json()) as {
      pieces: Array<{ name: string }>;
    };
    expect(listed.pieces.map((piece) => piece.name)).toEqual(expect.arrayContaining(['webhook', 'http']));
    const answer = await publish(url, stack.apiKey, goodPiece({ name: 'refused', version: '1.0.0' }));
    expect(answer).toMatchObject({ status: 503, code: 'PIECE_CHECK_UNAVAILABLE' });
    expect(answer.message).toMatch(/bubblewrap \(bwrap\), which is not on PATH/);
    expect(answer.message).toMatch(/PIECE_LOAD_CHECK=UNSANDBOXED/);
  });
});
