import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../build-step.ts';
import type { MachineInfo } from '../result-types.ts';

/**
 * A standalone script's options from its command line, or the code it exits with at once:
 * 0 after printing the usage for --help, 2 after printing the error and the usage.
 */
export function readScriptOptions<T extends { help: boolean }>(
  usage: string,
  parse: (argv: readonly string[], defaults: { cwd: string; defaultOutDir: string }) => T,
): T | number {
  let options: T;
  try {
    options = parse(process.argv.slice(2), {
      cwd: process.cwd(),
      defaultOutDir: join(REPO_ROOT, 'benchmark', 'results'),
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(usage);
    return 0;
  }
  return options;
}

/** Writes a progress line to stderr, stamped with the time of day (UTC). */
export function say(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

/** What every standalone script's report holds besides its own figures. */
export interface ScriptReportHead {
  schema: 1;
  startedAt: string;
  finishedAt: string;
  commandLine: string;
  machine: MachineInfo;
  services: { postgres: string; redis: string; s3: string };
  /** Stopped early (interrupted). */
  aborted: boolean;
}

/** The markdown report's lines on the command, its times and the machine. */
export function reportHeadLines(report: ScriptReportHead): string[] {
  const { machine } = report;
  return [
    `- Command: \`${report.commandLine}\``,
    `- Started ${report.startedAt}, finished ${report.finishedAt}${report.aborted ? ' (**stopped early**)' : ''}`,
    `- Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGb} GB; load average at start ${machine.loadAverageAtStart.map((v) => v.toFixed(2)).join(' ')}; Node ${machine.node}; flowbox ${machine.versions.flowbox ?? 'unknown'}`,
  ];
}

/** A report's file name without extension: `<date>-<host>-<name>`. */
export function reportFileBase(report: { startedAt: string; machine: MachineInfo }, name: string): string {
  const host = report.machine.hostname.replaceAll(/[^A-Za-z0-9.-]/g, '_') || 'host';
  return `${report.startedAt.slice(0, 10)}-${host}-${name}`;
}

/** Writes `<base>.md` and `<base>.json` into `outDir` and prints the markdown and both paths. */
export async function writeReport(
  outDir: string,
  baseName: string,
  markdown: string,
  report: unknown,
): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const base = join(outDir, baseName);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${markdown}\nResults:\n  ${base}.md\n  ${base}.json\n`);
}

/** Runs a script's main and exits with its code; a throw prints `<name> benchmark failed: <stack>` and exits 1. */
export function runScript(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `${name} benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
