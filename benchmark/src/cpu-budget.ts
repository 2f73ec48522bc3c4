import { fmt, mdTable } from './format.ts';
import { PROCESS_KINDS, type ProcessKind } from './proc-stats.ts';
import type { ScenarioResult } from './result-types.ts';

/**
 * CPU per warm request that each process kind may spend, in ms (the warm-path issue's targets):
 * 6.5 ms in all, so 260 req/s keep 1.7 of 2 cores busy. The report sets the measured figure
 * beside each, so a regression shows at once.
 */
export const WARM_CPU_BUDGET_MS: Readonly<Partial<Record<ProcessKind, number>>> = {
  app: 1.5,
  worker: 0.5,
  engine: 1.2,
  postgres: 1.3,
  s3: 0.8,
  redis: 0.4,
};
export const WARM_CPU_BUDGET_TOTAL_MS = 6.5;

export interface BudgetCell {
  kind: ProcessKind | 'all';
  measuredMs: number | null;
  budgetMs: number | null;
  over: boolean;
}

/** Each kind's median CPU ms per request against its budget; `all` sums the kinds' medians. */
export function cpuBudget(result: ScenarioResult): BudgetCell[] {
  const cells: BudgetCell[] = PROCESS_KINDS.map((kind) => {
    const measuredMs = result.summary?.processes[kind]?.cpuMsPerRequest?.median ?? null;
    const budgetMs = WARM_CPU_BUDGET_MS[kind] ?? null;
    return { kind, measuredMs, budgetMs, over: isOver(measuredMs, budgetMs) };
  });
  const measured = cells.map((c) => c.measuredMs).filter((ms): ms is number => ms !== null);
  const totalMs = measured.length === 0 ? null : measured.reduce((sum, ms) => sum + ms, 0);
  cells.push({
    kind: 'all',
    measuredMs: totalMs,
    budgetMs: WARM_CPU_BUDGET_TOTAL_MS,
    over: isOver(totalMs, WARM_CPU_BUDGET_TOTAL_MS),
  });
  return cells;
}

/** The report's section: warm scenarios only (the budget is for the warm path). */
export function cpuBudgetSection(results: readonly ScenarioResult[]): string[] {
  const warm = results.filter((r) => r.scenario.mode === 'warm' && r.summary !== null);
  if (warm.length === 0) return [];
  const kinds = [...PROCESS_KINDS, 'all' as const];
  return [
    '## CPU budget per warm request',
    '',
    `Median CPU ms per request against the budget (measured / budget; **over** marks a kind past it). \`all\` is the sum of the kinds, the load generator included; its budget is ${WARM_CPU_BUDGET_TOTAL_MS} ms.`,
    '',
    mdTable(
      ['scenario', ...kinds],
      warm.map((r) => {
        const cells = new Map(cpuBudget(r).map((cell) => [cell.kind, cell]));
        return [r.scenario.name, ...kinds.map((kind) => formatCell(cells.get(kind)))];
      }),
    ),
    '',
  ];
}

function isOver(measuredMs: number | null, budgetMs: number | null): boolean {
  return measuredMs !== null && budgetMs !== null && measuredMs > budgetMs;
}

function formatCell(cell: BudgetCell | undefined): string {
  if (cell === undefined || cell.measuredMs === null) return '–';
  if (cell.budgetMs === null) return fmt(cell.measuredMs, 2);
  const text = `${fmt(cell.measuredMs, 2)} / ${fmt(cell.budgetMs, 1)}`;
  return cell.over ? `**over** ${text}` : text;
}
