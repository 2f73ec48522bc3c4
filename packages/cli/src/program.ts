import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createApiClient } from './api/client.ts';
import { CliError } from './cli-error.ts';
import { addConnectionCommands } from './commands/connection-commands.ts';
import { listFlows, pushFlow } from './commands/flow-commands.ts';
import { loadFlowFile } from './commands/flow-file.ts';
import { readRunPayload, runSync, startRun } from './commands/flow-run.ts';
import { reportStepTest, testStep } from './commands/flow-test-step.ts';
import { buildPiece, publishPiece } from './commands/piece-build.ts';
import { listRefusedDeliveries, renderRefusedDeliveries } from './commands/refused-deliveries.ts';
import { describePieces, listPieces, yankPiece } from './commands/registry-pieces.ts';
import {
  listRuns,
  RUN_STATUSES,
  type RunStatus,
  rerunRun,
  showRun,
  tailRuns,
} from './commands/run-commands.ts';
import type { CliConfig } from './env.ts';
import { piecesDeclaration } from './flow-types/pieces-declaration.ts';
import { renderRunList, table } from './render/run-render.ts';
import { initFlows } from './scaffold/init-flows.ts';
import { initPiece } from './scaffold/init-piece.ts';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Where the user ran the command: relative paths resolve from here. */
  cwd: string;
  /** Ends `runs tail`. */
  signal: AbortSignal;
  fetch?: typeof fetch;
  /** The whole of standard input, for a value read from it (`connections set --from-file -`). */
  readStdin?: () => Promise<string>;
}

/**
 * The `flowbox` command tree (commander). Each action prints plain text to `io.out`; an error
 * throws and `runCli` prints its code and message.
 */
export function createProgram(config: CliConfig, io: CliIo): Command {
  const api = () => createApiClient(config, io.fetch);
  const path = (p: string | undefined) => resolve(io.cwd, p ?? '.');
  const program = new Command('flowbox')
    .description(`flowbox from the command line; talks to ${config.url} (FLOWBOX_URL)`)
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride()
    .showHelpAfterError();

  const piece = program.command('piece').description('write, build and publish pieces');
  piece
    .command('init <dir>')
    .description('scaffold a piece package (one action, its test, a build) in <dir>, outside this checkout')
    .option('--name <name>', "the piece's name in flows (default: the folder's name)")
    .option('--trigger <kind>', '`polling`: a polling trigger (new_entries) and its test too')
    .action(async (dir: string, options: { name?: string; trigger?: string }) => {
      const result = await initPiece(path(dir), { name: options.name, trigger: options.trigger });
      io.out(
        [
          `created piece ${result.name} in ${result.dir}:`,
          ...result.files.map((f) => `  ${f}`),
          '  vendor/ (the flowbox packages it builds against)',
          '',
          'next:',
          `  cd ${result.dir} && pnpm install --offline && pnpm test && pnpm run build`,
          '  flowbox piece publish',
          '',
        ].join('\n'),
      );
    });
  piece
    .command('build [dir]')
    .description('build dist/manifest.json and dist/piece.tgz (as `pnpm build` does for the built-in pieces)')
    .action(async (dir: string | undefined) => {
      const { manifest, archiveBytes } = await buildPiece(path(dir));
      io.out(
        `built ${manifest.name}@${manifest.version} (${archiveBytes} bytes): actions ${manifest.actions.join(', ') || '(none)'}\n`,
      );
    });
  piece
    .command('publish [dir]')
    .description('publish the built piece (dist/) to the registry')
    .option('--build', 'build it first')
    .action(async (dir: string | undefined, options: { build?: boolean }) => {
      if (options.build) await buildPiece(path(dir));
      const published = await publishPiece(api(), path(dir));
      const what = published.created ? 'published' : 'already published (same archive)';
      const isolate = published.isolate.supported
        ? 'runs in every mode, a V8 isolate included'
        : `cannot run in a V8 isolate (${published.isolate.reason ?? 'unknown'}): shared and process modes only`;
      io.out(`${what}: ${published.name}@${published.version} in ${published.ms} ms\n  ${isolate}\n`);
    });
  piece
    .command('list')
    .description('pieces in the registry')
    .action(async () => {
      const pieces = await listPieces(api());
      io.out(
        `${table([['PIECE', 'LATEST', 'VERSIONS'], ...pieces.map((p) => [p.name, p.latest, p.versions.join(', ')])])}\n`,
      );
    });
  piece
    .command('yank <name@version>')
    .description(
      'yank a piece version: no new flow version can pin it, flows pinned to it keep running it (refused while a published flow pins it, unless --force)',
    )
    .option('--force', 'yank it even though published flows pin it')
    .action(async (ref: string, options: { force?: boolean }) => {
      const yanked = await yankPiece(api(), ref, options.force === true);
      io.out(`yanked ${yanked.name}@${yanked.version} (at ${yanked.yankedAt})\n`);
    });

  const flow = program.command('flow').description('write, push, list and run flows');
  flow
    .command('init <dir>')
    .description(
      'scaffold a flows project in <dir>, outside this checkout: typed flow files against @flowbox/flow and the registry (flow types)',
    )
    .action(async (dir: string) => {
      const result = await initFlows(path(dir));
      io.out(
        [
          `created a flows project in ${result.dir}:`,
          ...result.files.map((f) => `  ${f}`),
          '  vendor/flow (@flowbox/flow, the typed flow package)',
          '',
          'next:',
          `  cd ${result.dir} && pnpm install --offline`,
          '  flowbox flow types && pnpm run typecheck',
          '  flowbox flow push hello.flow.ts --publish',
          '',
        ].join('\n'),
      );
    });
  flow
    .command('push <file>')
    .description(
      'create a flow, or add a version to it, from a JSON file or a module whose default export is defineFlow({...})',
    )
    .option('--publish', 'publish the new version (make it live)')
    .action(async (file: string, options: { publish?: boolean }) => {
      const loaded = await loadFlowFile(path(file));
      const pushed = await pushFlow(api(), config.url, loaded, options.publish === true);
      io.out(
        [
          `${pushed.created ? 'created flow' : 'updated flow'} ${pushed.flowId}: version ${pushed.versionNumber} (${pushed.versionId})${pushed.published ? ', published' : ', not published (use --publish)'}`,
          `  sync webhook:  POST ${pushed.webhooks.sync}`,
          `  async webhook: POST ${pushed.webhooks.async}`,
          ...pushed.warnings.map((warning) => `  warning: ${warning}`),
          '',
        ].join('\n'),
      );
    });
  flow
    .command('list')
    .description('flows, with their published version')
    .action(async () => {
      const flows = await listFlows(api());
      const rows = flows.map((f) => [
        f.id,
        f.name,
        f.enabled ? 'enabled' : 'disabled',
        f.publishedVersionId ?? '(unpublished)',
      ]);
      io.out(
        `${flows.length === 0 ? 'no flows' : table([['FLOW', 'NAME', 'STATE', 'PUBLISHED VERSION'], ...rows])}\n`,
      );
    });
  flow
    .command('run <flowId>')
    .description("run a flow's published version by hand, whatever its trigger (a schedule's too)")
    .option('--data <json|@file>', "the trigger's body: a JSON object, or @file holding one", undefined)
    .option('--sync', "wait and print the flow's answer, as its sync webhook gives it")
    .action(async (flowId: string, options: { data?: string; sync?: boolean }) => {
      const payload = await readRunPayload(options.data, io.cwd);
      if (options.sync === true) {
        const answer = await runSync(api(), flowId, payload);
        io.out(`run ${answer.runId ?? '(unknown)'} answered ${answer.status}\n${answer.body}\n`);
        return;
      }
      const runId = await startRun(api(), flowId, payload);
      io.out(`started run ${runId} of flow ${flowId}; read it with: flowbox runs show ${runId}\n`);
    });
  flow
    .command('test-step <flowId> <step>')
    .description(
      'run one piece or code step alone on a worker over sample outputs of the steps before it; prints its output, or its error with exit code 1 (nothing is recorded)',
    )
    .option(
      '--data <json|@file>',
      'sample outputs by step or trigger name, e.g. {"trigger":{"body":{}}}; a loop\'s body step reads {"<loop>":{"item":...}}',
      undefined,
    )
    .option('--version <id>', '`latest` or a version id (default: the published version, else the latest)')
    .action(async (flowId: string, stepName: string, options: { data?: string; version?: string }) => {
      const data = await readRunPayload(options.data, io.cwd);
      reportStepTest(io, stepName, await testStep(api(), flowId, stepName, data, options.version));
    });
  flow
    .command('refused <flowId>')
    .description(
      "the flow's webhooks refused before any run existed (bad signature, body too large, queue full, flow disabled), newest first",
    )
    .option('--limit <n>', 'how many', positiveInt, 20)
    .option('--headers', 'show the headers kept with each (credentials are never kept)')
    .action(async (flowId: string, options: { limit: number; headers?: boolean }) => {
      const deliveries = await listRefusedDeliveries(api(), flowId, options.limit);
      io.out(`${renderRefusedDeliveries(flowId, deliveries, options.headers === true)}\n`);
    });
  flow
    .command('types')
    .description("write the registry's pieces as types for defineFlow (flowbox-pieces.d.ts)")
    .option('--out <file>', 'where to write them', 'flowbox-pieces.d.ts')
    .action(async (options: { out: string }) => {
      const { versions, latest } = await describePieces(api());
      await writeFile(path(options.out), piecesDeclaration(versions, latest, config.url));
      io.out(`wrote ${path(options.out)}: ${versions.length} piece versions\n`);
    });

  addConnectionCommands(program, api, { out: io.out, path, readStdin: io.readStdin });

  const runs = program.command('runs').description('read runs');
  runs
    .command('list')
    .description('recent runs, newest first')
    .option('--flow <flowId>', 'only this flow')
    .addOption(new Option('--status <status>', 'only this status').choices(RUN_STATUSES))
    .option('--payload <text>', "only runs whose trigger request's body holds this text (any case)")
    .option('--since <time>', 'only runs created at or after this ISO time', isoTime)
    .option('--until <time>', 'only runs created before this ISO time', isoTime)
    .option('--limit <n>', 'how many', positiveInt, 20)
    .action(
      async (options: {
        flow?: string;
        status?: RunStatus;
        payload?: string;
        since?: Date;
        until?: Date;
        limit: number;
      }) => {
        const found = await listRuns(api(), {
          flowId: options.flow,
          status: options.status,
          payload: options.payload,
          since: options.since,
          until: options.until,
          limit: options.limit,
        });
        io.out(`${renderRunList(found)}\n`);
      },
    );
  runs
    .command('show <runId>')
    .description("a run: its steps and where its time went; 'last' for the newest (of --flow)")
    .option('--flow <flowId>', "with 'last': the newest run of this flow")
    .action(async (runId: string, options: { flow?: string }) => {
      let id = runId;
      if (runId === 'last') {
        const [newest] = await listRuns(api(), { flowId: options.flow, limit: 1 });
        if (newest === undefined) throw new CliError('RUN_NOT_FOUND', 'there is no run yet');
        id = newest.id;
      }
      io.out(`${await showRun(api(), id)}\n`);
    });
  runs
    .command('rerun <runId>')
    .description("a new run with the run's request, on its flow version (or the latest with --latest)")
    .option('--latest', "on the flow's published version instead of the run's own")
    .option('--from-failed', 'replay the steps that succeeded and start at the failed step')
    .action(async (runId: string, options: { latest?: boolean; fromFailed?: boolean }) => {
      const started = await rerunRun(
        api(),
        runId,
        options.latest === true ? 'latest' : 'run',
        options.fromFailed === true ? 'failed' : 'start',
      );
      const replayed = started.replayed === undefined ? '' : `, ${started.replayed} steps replayed`;
      io.out(
        `${started.runId} (re-run of ${started.rerunOf}, version ${started.flowVersionId}${replayed})\n`,
      );
    });
  runs
    .command('tail')
    .description('follow runs as they are accepted and finish (polls the API; Ctrl-C stops)')
    .option('--flow <flowId>', 'only this flow')
    .option('--interval <ms>', 'poll interval', positiveInt, 1000)
    .action(async (options: { flow?: string; interval: number }) => {
      await tailRuns(
        api(),
        { flowId: options.flow, intervalMs: options.interval, since: new Date(), signal: io.signal },
        (line) => io.out(`${line}\n`),
      ).catch((error: unknown) => {
        if (!io.signal.aborted) throw error;
      });
    });
  return program;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** An ISO 8601 date or date-time (`2026-11-29`, `2026-11-29T12:00:00Z`); a bare date is UTC midnight. */
function isoTime(value: string): Date {
  const time = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) {
    throw new InvalidArgumentError('must be an ISO date or date-time, e.g. 2026-11-29T12:00:00Z');
  }
  return time;
}

/** Runs one command line; returns the exit code. */
export async function runCli(argv: readonly string[], config: CliConfig, io: CliIo): Promise<number> {
  const program = createProgram(config, io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`error ${error.code}: ${error.message}\n`);
      return 1;
    }
    // commander's own exits (help, version, a bad option) have printed already.
    const exit = error as { code?: unknown; exitCode?: unknown };
    if (
      typeof exit.code === 'string' &&
      exit.code.startsWith('commander.') &&
      typeof exit.exitCode === 'number'
    ) {
      return exit.exitCode;
    }
    io.err(`error INTERNAL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
