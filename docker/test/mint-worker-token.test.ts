import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenService } from '../../apps/app/src/tokens.ts';
import { repoPath } from './support/repo.ts';

/** The CLI that compose's one-shot `worker-token` service and Kubernetes operators run. */

const run = promisify(execFile);
const CLI = repoPath('apps/app/src/cli/mint-worker-token.ts');
const SECRET = 'a-token-secret-of-at-least-32-characters';
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function mint(args: string[], env: Record<string, string>) {
  return run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
}

describe('mint-worker-token', () => {
  it('prints a worker token the app accepts', async () => {
    const { stdout } = await mint(['--name', 'compose-worker'], { TOKEN_SECRET: SECRET });
    const claims = new TokenService(SECRET).verifyWorkerToken(stdout.trim());
    expect(claims).toEqual({ workerName: 'compose-worker' });
  });

  it('writes the token to a file only its owner can read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-token-'));
    dirs.push(dir);
    const out = join(dir, 'worker-token');
    await mint(['--out', out, '--ttl-days', '1'], { TOKEN_SECRET: SECRET });
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(new TokenService(SECRET).verifyWorkerToken(await readFile(out, 'utf8'))).toEqual({
      workerName: 'worker',
    });
  });

  it('names TOKEN_SECRET when it is missing, and refuses bad arguments', async () => {
    await expect(mint([], {})).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('TOKEN_SECRET'),
    });
    await expect(mint(['--ttl-days', '0'], { TOKEN_SECRET: SECRET })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--ttl-days'),
    });
  });
});
