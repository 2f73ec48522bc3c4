// `flowbox flow init` end to end against a real app (no worker): a flows project outside any
// piece folder installs offline, gets the registry's pieces as types, type-checks (and catches a
// wrong input), and pushes its flow; a typed flow file with no project is refused with the way out.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../../../apps/app/src/app.ts';
import { startTestApp, TEST_API_KEY } from '../../../apps/app/test/app-harness.ts';
import { CHECKOUT, FLOWBOX_BIN, run } from './cli-harness.ts';

describe('flowbox flow init (real app)', () => {
  let app: FlowboxApp;
  let url: string;
  let work: string;
  const flowbox = (args: readonly string[], cwd: string) =>
    run(process.execPath, [FLOWBOX_BIN, ...args], {
      cwd,
      env: { ...process.env, FLOWBOX_URL: url, FLOWBOX_API_KEY: TEST_API_KEY },
    });

  beforeAll(async () => {
    ({ app, url } = await startTestApp());
    work = await mkdtemp(join(tmpdir(), 'flowbox-flow-init-'));
  });
  afterAll(async () => {
    await app?.close();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('scaffolds a project whose flows type-check against the registry and push', {
    timeout: 240_000,
  }, async () => {
    const dir = join(work, 'my-flows');
    expect(relative(CHECKOUT, dir).startsWith('..')).toBe(true);
    const init = await flowbox(['flow', 'init', 'my-flows'], work);
    expect(init.stderr).toBe('');
    expect(init.stdout).toContain(`created a flows project in ${dir}`);
    expect(init.stdout).toContain('  hello.flow.ts');
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies['@flowbox/flow']).toBe('file:vendor/flow');

    const install = await run('pnpm', ['install', '--offline'], { cwd: dir, env: process.env });
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0);
    const types = await flowbox(['flow', 'types'], dir);
    expect(types.stdout, types.stderr).toContain(join(dir, 'flowbox-pieces.d.ts'));
    const typecheck = await run('pnpm', ['run', 'typecheck'], { cwd: dir, env: process.env });
    expect(typecheck.code, `${typecheck.stdout}\n${typecheck.stderr}`).toBe(0);

    // The registry's types are in force: a response step with a status that is not a number fails.
    const hello = await readFile(join(dir, 'hello.flow.ts'), 'utf8');
    await writeFile(join(dir, 'wrong.flow.ts'), hello.replace('status: 200', "status: 'two hundred'"));
    const wrong = await run('pnpm', ['run', 'typecheck'], { cwd: dir, env: process.env });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toContain('wrong.flow.ts');
    await rm(join(dir, 'wrong.flow.ts'));

    const push = await flowbox(['flow', 'push', 'hello.flow.ts', '--publish'], dir);
    expect(push.stderr).toBe('');
    expect(push.stdout).toContain('created flow hello: version 1 (hello-v1), published');
  });

  it('refuses a typed flow file with nothing providing @flowbox/flow, naming flow init', async () => {
    const lonely = join(work, 'lonely');
    await mkdir(lonely);
    await writeFile(
      join(lonely, 'x.flow.ts'),
      "import { defineFlow } from '@flowbox/flow';\nexport default defineFlow({ id: 'x', name: 'x', definition: {} as never });\n",
    );
    const push = await flowbox(['flow', 'push', 'x.flow.ts'], lonely);
    expect(push.code).toBe(1);
    expect(push.stderr).toBe(
      `error FLOW_FILE_INVALID: ${join(lonely, 'x.flow.ts')}: imports @flowbox/flow, which is not installed beside it; \`flowbox flow init <dir>\` makes a flows project that has it (then \`pnpm install --offline\` there)\n`,
    );
  });

  it('refuses a folder inside the checkout or one that is not empty', async () => {
    const inside = await flowbox(['flow', 'init', join(CHECKOUT, '.data', 'flows-here')], work);
    expect([inside.code, inside.stderr]).toEqual([
      1,
      `error INVALID_TARGET: ${join(CHECKOUT, '.data', 'flows-here')} is inside the flowbox checkout; a flows project lives in its own folder, outside it\n`,
    ]);
    const taken = await flowbox(['flow', 'init', 'lonely'], work);
    expect(taken.stderr).toBe(`error INVALID_TARGET: ${join(work, 'lonely')} is not empty\n`);
  });
});
