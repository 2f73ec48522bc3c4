import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bubblewrapArgs, sandboxUnavailable, systemReadOnlyBinds } from './bubblewrap.ts';
import { noNewProcessesFilter } from './seccomp-filter.ts';

/** What a Node script in the sandbox sees of its surroundings, one line of JSON. */
const PROBE = `
const fs = require('node:fs');
const attempt = (run) => { try { return String(run()); } catch (error) { return error.code ?? error.message; } };
console.log(JSON.stringify({
  pid: process.pid,
  ppid: process.ppid,
  interfaces: Object.keys(require('node:os').networkInterfaces()),
  fork: attempt(() => require('node:child_process').execFileSync(process.execPath, ['-e', '1']).length),
  writeRoot: attempt(() => fs.writeFileSync('/planted', 'x')),
  writeBound: attempt(() => fs.writeFileSync(process.argv[1] + '/planted', 'x')),
  writeTmp: attempt(() => { fs.writeFileSync('/tmp/own', 'x'); return 'written'; }),
  hostFile: attempt(() => fs.readFileSync(process.argv[2], 'utf8')),
  environment: Object.keys(process.env).sort(),
}));
`;

describe('a bubblewrap sandbox from bubblewrapArgs (a real bwrap)', () => {
  let dir: string;
  let bound: string;
  let hostFile: string;

  beforeAll(async () => {
    expect(sandboxUnavailable('this test')).toBeNull();
    dir = await mkdtemp(join(tmpdir(), 'flowbox-sandbox-test-'));
    bound = join(dir, 'bound');
    hostFile = join(dir, 'host-secret');
    await writeFile(hostFile, 'secret');
    await mkdir(bound);
    await writeFile(join(dir, 'seccomp.bpf'), noNewProcessesFilter() ?? Buffer.alloc(0));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has its own PID and network namespaces, a read-only root, a private /tmp and no child process', async () => {
    const seccomp = await open(join(dir, 'seccomp.bpf'), 'r');
    try {
      const args = bubblewrapArgs({
        hostname: 'flowbox-test',
        tmpBytes: 1024 * 1024,
        readOnlyBinds: [...systemReadOnlyBinds(), { source: bound }],
        chdir: bound,
        seccompFd: 3,
        command: [process.execPath, '-e', PROBE, bound, hostFile],
      });
      const child = spawn('bwrap', args, { env: {}, stdio: ['ignore', 'pipe', 'pipe', seccomp.fd] });
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      const seen = JSON.parse(out) as Record<string, unknown>;
      expect(seen).toMatchObject({
        ppid: 1,
        interfaces: ['lo'],
        fork: 'EPERM',
        writeRoot: 'EROFS',
        writeBound: 'EROFS',
        writeTmp: 'written',
        // Under the private /tmp: the host's file is not there.
        hostFile: 'ENOENT',
        environment: ['PWD'],
      });
      expect(existsSync(join(bound, 'planted'))).toBe(false);
      expect(existsSync('/planted')).toBe(false);
    } finally {
      await seccomp.close();
    }
  });

  it('names what is missing when bubblewrap is not on PATH', () => {
    const saved = process.env.PATH;
    process.env.PATH = dir;
    try {
      expect(sandboxUnavailable('FEATURE=ON')).toBe(
        'FEATURE=ON needs bubblewrap (bwrap), which is not on PATH: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)',
      );
    } finally {
      process.env.PATH = saved;
    }
  });
});
