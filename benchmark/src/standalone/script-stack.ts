import { buildFlowbox, REPO_ROOT } from '../build-step.ts';
import { collectMachineInfo } from '../machine-info.ts';
import type { MachineInfo } from '../result-types.ts';
import { interruptSignal, type LocalStack, startLocalStack } from './local-stack.ts';
import type { ScriptOptions } from './script-options.ts';
import { type ScriptReportHead, say } from './script-run.ts';

/** A standalone script's run: its stack, the signal that stops it, and what its report heads with. */
export interface ScriptRun {
  local: LocalStack;
  signal: AbortSignal;
  startedAt: Date;
  machine: MachineInfo;
}

/**
 * Starts a standalone script's run: the interrupt signal, the start time and the machine, the
 * build (unless --skip-build), then the stores and the script's apps and workers.
 */
export async function startScriptRun(
  options: ScriptOptions & { apps: number; workers: number },
  stack: { env: Record<string, string>; name: string },
): Promise<ScriptRun> {
  const signal = interruptSignal(say);
  const startedAt = new Date();
  const machine = collectMachineInfo(REPO_ROOT);
  if (options.build) {
    say('pnpm build');
    await buildFlowbox(signal);
  }
  say(`starting the stores and ${options.apps} app(s), ${options.workers} worker(s)`);
  const local = await startLocalStack({
    apps: options.apps,
    workers: options.workers,
    env: stack.env,
    name: stack.name,
    signal,
  });
  return { local, signal, startedAt, machine };
}

/** The head of the run's report, finished now; `command` is the pnpm script that ran it. */
export function reportHead(command: string, run: ScriptRun): Omit<ScriptReportHead, 'aborted'> {
  return {
    schema: 1,
    startedAt: run.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commandLine: [command, ...process.argv.slice(2)].join(' '),
    machine: run.machine,
    services: run.local.services,
  };
}
