import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/program.ts';
import { CHECKOUT, type CliStack, flowbox, run, startCliStack } from './cli-harness.ts';

/** A flow using the scaffolded piece and the `http` piece, which calls the loopback server. */
function flowFile(serverPort: number): string {
  return `import { defineFlow } from '@flowbox/flow';

export default defineFlow({
  id: 'cli-e2e',
  name: 'a scaffolded piece and the http piece',
  definition: {
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
    steps: [
      {
        type: 'piece',
        name: 'lookup',
        piece: 'http',
        action: 'send_request',
        input: { url: 'http://127.0.0.1:${serverPort}/people/{{trigger.body.id}}', responseType: 'json' },
      },
      {
        type: 'piece',
        name: 'hello',
        piece: 'e2e-greeter',
        action: 'greet',
        input: { name: '{{lookup.body.name}}', excited: true },
      },
      {
        type: 'piece',
        name: 'answer',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, body: '{{hello}}' },
      },
    ],
  },
});
`;
}

// End to end: a piece scaffolded by the CLI outside the checkout, built,
// published, used by a TypeScript flow with the http piece (against a loopback server named in
// EGRESS), its webhook called and its run read back, all through the `flowbox` command.
describe('flowbox CLI end to end', () => {
  let cli: CliStack;
  let work: string;
  let server: Server;
  let port: number;
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ name: 'Ada Lovelace' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    cli = await startCliStack({ EGRESS: `127.0.0.1:${port}` });
    work = await mkdtemp(join(tmpdir(), 'flowbox-cli-e2e-'));
  });
  afterAll(async () => {
    await cli?.close();
    await new Promise((resolve) => server?.close(resolve));
    await rm(work, { recursive: true, force: true });
  });

  it('scaffolds, builds, publishes, pushes a typed flow, runs it and reads the run', {
    timeout: 300_000,
  }, async () => {
    const piece = join(work, 'greeter');
    expect(relative(CHECKOUT, piece).startsWith('..')).toBe(true);
    const init = await flowbox(cli, ['piece', 'init', 'greeter', '--name', 'e2e-greeter'], work);
    expect(init.stderr).toBe('');
    expect(init.stdout).toContain('created piece e2e-greeter');

    // The piece's own install (offline: only the local pnpm store), test, typecheck and build.
    for (const args of [['install', '--offline'], ['test'], ['run', 'typecheck'], ['run', 'build']]) {
      const step = await run('pnpm', args, { cwd: piece, env: process.env });
      expect(step.code, `pnpm ${args.join(' ')}\n${step.stdout}\n${step.stderr}`).toBe(0);
    }
    const ownBuild = await readFile(join(piece, 'dist', 'piece.tgz'));

    const build = await flowbox(cli, ['piece', 'build'], piece);
    expect(build.stdout).toContain('built e2e-greeter@0.1.0');
    // One build, whichever way it is started: the same bytes.
    expect(await readFile(join(piece, 'dist', 'piece.tgz'))).toEqual(ownBuild);

    const publish = await flowbox(cli, ['piece', 'publish'], piece);
    expect(publish.stdout, publish.stderr).toMatch(/^published: e2e-greeter@0\.1\.0 in (\d+) ms$/m);
    // The scaffolded piece imports no Node built-in: the registry finds it fit for a V8 isolate.
    expect(publish.stdout).toContain('runs in every mode, a V8 isolate included');
    const again = await flowbox(cli, ['piece', 'publish'], piece);
    expect(again.stdout).toContain('already published (same archive): e2e-greeter@0.1.0');
    process.stdout.write(
      `${JSON.stringify({ figure: 'piece publish latency', firstMs: Number(/in (\d+) ms/.exec(publish.stdout)?.[1]), againMs: Number(/in (\d+) ms/.exec(again.stdout)?.[1]) })}\n`,
    );

    // Other content under the same version is refused with the API's code, exit 1.
    await writeFile(
      join(piece, 'src', 'greet.ts'),
      (await readFile(join(piece, 'src', 'greet.ts'), 'utf8')).replace(
        "'Greets someone by name.'",
        "'Greets.'",
      ),
    );
    expect((await flowbox(cli, ['piece', 'build'], piece)).code).toBe(0);
    const conflict = await flowbox(cli, ['piece', 'publish'], piece);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/^error PIECE_VERSION_EXISTS: /);

    // A build that fails leaves the previous archive: publish refuses it rather than send it.
    const greetSource = await readFile(join(piece, 'src', 'greet.ts'), 'utf8');
    await writeFile(join(piece, 'src', 'greet.ts'), `${greetSource}\nexport const broken = ;\n`);
    expect((await flowbox(cli, ['piece', 'build'], piece)).code).toBe(1);
    const stale = await flowbox(cli, ['piece', 'publish'], piece);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(
      /^error PIECE_BUILD_STALE: dist\/piece\.tgz \(built \S+\) is older than src\/greet\.ts \(changed \S+\): build it first/,
    );
    await writeFile(join(piece, 'src', 'greet.ts'), greetSource);

    const types = await flowbox(cli, ['flow', 'types'], piece);
    expect(types.stdout).toContain('flowbox-pieces.d.ts');
    await writeFile(join(piece, 'flow.ts'), flowFile(port));
    const typecheck = await run('pnpm', ['run', 'typecheck'], { cwd: piece, env: process.env });
    expect(typecheck.code, typecheck.stdout).toBe(0);

    const push = await flowbox(cli, ['flow', 'push', 'flow.ts', '--publish'], piece);
    expect(push.stderr).toBe('');
    expect(push.stdout).toContain('created flow cli-e2e: version 1');
    const syncUrl = /sync webhook: {2}POST (\S+)/.exec(push.stdout)?.[1] ?? '';
    expect(syncUrl).toBe(`${cli.url}/v1/webhooks/cli-e2e/sync`);
    expect(push.stdout).toContain(`async webhook: POST ${cli.url}/v1/webhooks/cli-e2e\n`);

    const answer = await fetch(syncUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 7 }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ greeting: 'Hello, Ada Lovelace!' });
    expect(requests).toEqual(['/people/7']);
    const runId = answer.headers.get('x-flowbox-run-id') ?? '';

    const list = await flowbox(cli, ['runs', 'list', '--flow', 'cli-e2e', '--status', 'SUCCEEDED'], piece);
    expect(list.stdout).toMatch(new RegExp(`^${runId}\\s+cli-e2e\\s+SUCCEEDED\\s+sync`, 'm'));
    const show = await flowbox(cli, ['runs', 'show', runId], piece);
    expect(show.stdout).toContain(`run ${runId}`);
    expect(show.stdout).toMatch(/status\s+SUCCEEDED/);
    expect(show.stdout).toMatch(/lookup\s+http\/send_request\s+SUCCEEDED/);
    expect(show.stdout).toMatch(
      /hello\s+e2e-greeter\/greet\s+SUCCEEDED\s+\S+ ms\s+\{"greeting":"Hello, Ada Lovelace!"\}/,
    );
    expect(show.stdout).toMatch(/provision\s+\S+ ms/);
    const rerun = await flowbox(cli, ['runs', 'rerun', runId, '--latest'], piece);
    expect(rerun.stdout).toMatch(
      new RegExp(`^[0-9a-f-]{36} \\(re-run of ${runId}, version cli-e2e-v1\\)$`, 'm'),
    );

    // A JSON flow file (a bare definition: its id is the file's name) pinning a version that was
    // never published is refused at push, with the API's code.
    const pinned = {
      trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
      steps: [
        {
          type: 'piece',
          name: 'hi',
          piece: 'e2e-greeter',
          version: '9.9.9',
          action: 'greet',
          input: { name: 'x' },
        },
      ],
    };
    await writeFile(join(piece, 'pinned-flow.json'), JSON.stringify(pinned));
    const refused = await flowbox(cli, ['flow', 'push', 'pinned-flow.json'], piece);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error INVALID_FLOW: create flow pinned-flow: .*9\.9\.9/);

    // The same without the pin pushes, and the app's warning is shown: no step answers a sync caller.
    const { version: _unpinned, ...greeting } = pinned.steps[0] ?? {};
    await writeFile(join(piece, 'silent-flow.json'), JSON.stringify({ ...pinned, steps: [greeting] }));
    const silent = await flowbox(cli, ['flow', 'push', 'silent-flow.json'], piece);
    expect(silent.stderr).toBe('');
    expect(silent.stdout).toMatch(/^ {2}warning: no step answers a sync caller .*204 No Content/m);
    expect(push.stdout).not.toContain('warning:');

    const flows = await flowbox(cli, ['flow', 'list'], piece);
    expect(flows.stdout).toMatch(/^cli-e2e\s+a scaffolded piece and the http piece\s+enabled\s+cli-e2e-v1$/m);
    const missing = await flowbox(cli, ['runs', 'show', 'no-such-run'], piece);
    expect([missing.code, missing.stderr]).toEqual([
      1,
      'error RUN_NOT_FOUND: read run no-such-run: run no-such-run not found\n',
    ]);
  });

  it('says where a code step failed in its code: at push, and in runs show', {
    timeout: 120_000,
  }, async () => {
    const flowOfCode = (code: string) => ({
      trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
      steps: [{ type: 'code', name: 'compute', code, input: {} }],
    });
    await writeFile(join(work, 'code-syntax.json'), JSON.stringify(flowOfCode('const a = 1;\n  return {;')));
    const refused = await flowbox(cli, ['flow', 'push', 'code-syntax.json', '--publish'], work);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "definition.steps.0.code: does not compile: SyntaxError: Unexpected token ';' (line 2, column 11)",
    );

    const throws = "const f = () => {\n  throw new Error('boom');\n};\nf();";
    await writeFile(join(work, 'code-throws.json'), JSON.stringify(flowOfCode(throws)));
    const push = await flowbox(cli, ['flow', 'push', 'code-throws.json', '--publish'], work);
    expect(push.code, push.stderr).toBe(0);
    const answer = await fetch(`${cli.url}/v1/webhooks/code-throws/sync`, { method: 'POST' });
    expect(answer.status).toBe(500);
    const runId = answer.headers.get('x-flowbox-run-id') ?? '';
    // The caller is answered as the step fails; the run's record follows from the worker's result.
    for (;;) {
      const view = await fetch(`${cli.url}/v1/runs/${runId}`, {
        headers: { authorization: `Bearer ${cli.apiKey}` },
      });
      if (((await view.json()) as { status: string }).status === 'FAILED') break;
    }
    const show = await flowbox(cli, ['runs', 'show', runId], work);
    expect(show.stdout).toContain('error    CODE_STEP_FAILED at compute: boom (line 2, column 9)');
    expect(show.stdout).toContain(
      'compute failed\n  at f (file:///code-step.js:2:9)\n  at codeStep (file:///code-step.js:4:1)',
    );
  });

  it('follows runs with runs tail (polling) until stopped', { timeout: 120_000 }, async () => {
    const controller = new AbortController();
    let output = '';
    let runId: string | undefined;
    let markSeen = () => {};
    const seen = new Promise<void>((resolve) => {
      markSeen = resolve;
    });
    const check = () => {
      if (runId !== undefined && new RegExp(`^${runId}\\s+cli-e2e\\s+SUCCEEDED`, 'm').test(output))
        markSeen();
    };
    const tail = runCli(
      ['runs', 'tail', '--flow', 'cli-e2e', '--interval', '200'],
      { url: cli.url, apiKey: cli.apiKey },
      {
        out: (text) => {
          output += text;
          check();
        },
        err: (text) => {
          output += text;
        },
        cwd: work,
        signal: controller.signal,
      },
    );
    const answer = await fetch(`${cli.url}/v1/webhooks/cli-e2e`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 8 }),
    });
    expect(answer.status).toBe(202);
    runId = ((await answer.json()) as { runId: string }).runId;
    check();
    await seen;
    controller.abort();
    expect(await tail).toBe(0);
    expect(output).toMatch(/^RUN\s+FLOW\s+STATUS/);
    expect(output).not.toContain('error');
  });
});
