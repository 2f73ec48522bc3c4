import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * `pnpm lint:openapi`: redocly's lint of docs/openapi.json under redocly.yaml, failing on any
 * error or warning (redocly itself exits 0 on warnings). Offline: the rules are local, the
 * document has no remote $ref, and the update check and telemetry are off.
 */
interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{
    ruleId: string;
    severity: string;
    message: string;
    location: Array<{ pointer: string }>;
  }>;
}

const root = join(import.meta.dirname, '..');
const result = spawnSync(
  join(root, 'node_modules', '.bin', 'redocly'),
  ['lint', 'docs/openapi.json', '--config', 'redocly.yaml', '--format', 'json', '--max-problems', '1000'],
  {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  },
);
let report: LintReport | undefined;
try {
  report = JSON.parse(result.stdout) as LintReport;
} catch {
  process.stderr.write(`${result.stdout}${result.stderr}`);
}
if (report === undefined) {
  console.error(
    `lint:openapi: redocly gave no report (exit ${result.status}, ${String(result.error ?? '')})`,
  );
  process.exitCode = 1;
} else {
  for (const problem of report.problems) {
    const where = problem.location.map((location) => location.pointer).join(', ');
    console.log(`${problem.severity} ${problem.ruleId} at ${where}: ${problem.message}`);
  }
  const { errors, warnings } = report.totals;
  console.log(`docs/openapi.json: ${errors} errors, ${warnings} warnings (redocly.yaml)`);
  if (errors + warnings > 0 || result.status !== 0) process.exitCode = 1;
}
