/**
 * Wall time of a loop whose iterations wait on HTTP: 100 items, each a code step that `fetch`es a
 * loopback server answering after 50 ms (EGRESS names it), at `--concurrency` iterations at
 * once (8 by default: 100 × 50 ms / 8 ≈ 0.65 s of waiting; one at a time needs 5 s), in the
 * engine's realm (`shared`) and in a run's isolate (`isolate`), in-process against a sink app.
 * Prints one JSON line per mode and run; a timing here is a figure, never a pass or fail. Needs
 * `pnpm build` (the isolate framework).
 *
 *   node apps/engine/scripts/measure-loop-fetch.ts [--concurrency 8] [--items 100] [--delay-ms 50] [--runs 3]
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EngineJob, FlowDefinition } from '@flowbox/protocol';
import { createIsolatedVmRunner } from '../src/code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from '../src/code-steps/node-vm-runner.ts';
import { createFlowBundleLoader } from '../src/flows/flow-bundle-loader.ts';
import { createFlowExecutor } from '../src/flows/flow-executor.ts';
import { createHttpClient } from '../src/host/http-client.ts';
import { createRunIsolation } from '../src/isolate/run-isolation.ts';
import { createPieceLoader } from '../src/pieces/piece-loader.ts';
import { prepareEngineArtifacts } from '../test/support/artifacts.ts';
import { makeEngineJob } from '../test/support/fixtures.ts';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '8' },
    items: { type: 'string', default: '100' },
    'delay-ms': { type: 'string', default: '50' },
    runs: { type: 'string', default: '3' },
  },
});
const concurrency = Number(values.concurrency);
const items = Number(values.items);
const delayMs = Number(values['delay-ms']);

const slow = createServer((_req, res) => {
  setTimeout(() => res.end('{"ok":true}'), delayMs);
});
slow.listen(0, '127.0.0.1');
await once(slow, 'listening');
const port = (slow.address() as AddressInfo).port;
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.statusCode = 204;
    res.end();
  });
});
sink.listen(0, '127.0.0.1');
await once(sink, 'listening');
const appUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const flow: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'loop',
      name: 'each',
      items: Array.from({ length: items }, (_, index) => index),
      concurrency,
      steps: [
        {
          type: 'code',
          name: 'call',
          code: 'const answer = await fetch(inputs.url); return answer.json();',
          input: { url: `http://127.0.0.1:${port}/item/{{each.item}}` },
        },
      ],
    },
  ],
};

const dir = await mkdtemp(join(tmpdir(), 'flowbox-loop-fetch-'));
const http = createHttpClient();
const isolated = createIsolatedVmRunner({ onCatastrophicError: () => {} });
const runIsolation = createRunIsolation({
  library: isolated.library,
  log: () => {},
  onCatastrophicError: () => {},
});
try {
  const executor = createFlowExecutor({
    bundles: createFlowBundleLoader(),
    pieces: createPieceLoader(),
    codeRunners: { SANDBOX_CODE_ONLY: isolated, SANDBOXED: isolated, UNSANDBOXED: createNodeVmRunner() },
    http,
    log: () => {},
    runIsolation,
  });
  const artifacts = await prepareEngineArtifacts(dir, flow);
  for (const isolation of ['shared', 'isolate'] as const) {
    const job: EngineJob = makeEngineJob(appUrl, `${appUrl}/s3/logs/run.json`, {
      ...artifacts,
      isolation,
      egress: { allowPublic: false, named: [{ host: '127.0.0.1', port }] },
      limits: { flowTimeoutMs: 60_000, codeStepTimeoutMs: 10_000, codeStepMemoryMb: 64 },
    });
    for (let run = 1; run <= Number(values.runs); run += 1) {
      const started = performance.now();
      const { outcome } = await executor.execute(job);
      const wallMs = Math.round(performance.now() - started);
      runIsolation.prepareNext();
      const line = {
        isolation,
        run,
        items,
        concurrency,
        delayMs,
        status: outcome.status,
        wallMs,
        error: outcome.error?.message,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  }
} finally {
  runIsolation.close();
  isolated.close();
  http.close();
  slow.closeAllConnections();
  slow.close();
  sink.closeAllConnections();
  sink.close();
  await rm(dir, { recursive: true, force: true });
}
