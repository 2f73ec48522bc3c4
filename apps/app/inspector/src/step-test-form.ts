import { ApiError } from './api.ts';
import type { FlowView, StepTestResult, VersionView } from './api-types.ts';
import { statusBadge } from './badges.ts';
import type { ViewContext } from './context.ts';
import { h, show } from './dom.ts';

type Step = VersionView['definition']['steps'][number];

/**
 * "Test step": one piece or code step of the flow run alone on a worker over sample data
 * (`POST /v1/flows/:flowId/steps/:stepName/test`), its output or error shown here. The published
 * version, or the latest; nothing is recorded.
 */
export function stepTestForm(context: ViewContext, flow: FlowView): HTMLElement {
  const form = h(
    'div',
    { class: 'run-form', 'data-testid': `step-test-${flow.id}` },
    h('span', { class: 'muted' }, 'Loading steps…'),
  );
  void context.api
    .versions(flow.id)
    .then(({ versions }) => show(form, ...formFor(context, flow, versions)))
    .catch(context.fail);
  return form;
}

function formFor(context: ViewContext, flow: FlowView, versions: VersionView[]): Node[] {
  const latest = versions.reduce<VersionView | undefined>(
    (last, version) => (last === undefined || version.number > last.number ? version : last),
    undefined,
  );
  const published = versions.find((version) => version.id === flow.publishedVersionId);
  const choices = [published, latest === published ? undefined : latest].filter(
    (version): version is VersionView => version !== undefined,
  );
  if (choices.length === 0) return [h('span', { class: 'muted' }, 'The flow has no version.')];
  const version = h(
    'select',
    { 'aria-label': `version to test of ${flow.id}`, 'data-testid': `step-test-version-${flow.id}` },
    ...choices.map((choice) =>
      h('option', { value: choice.id }, `v${choice.number}${choice === published ? ' (live)' : ' (latest)'}`),
    ),
  );
  const step = h('select', {
    'aria-label': `step to test of ${flow.id}`,
    'data-testid': `step-test-step-${flow.id}`,
  });
  const fillSteps = () => {
    const chosen = choices.find((choice) => choice.id === version.value) ?? choices[0];
    show(
      step,
      ...leafNames(chosen?.definition.steps ?? []).map((name) => h('option', { value: name }, name)),
    );
  };
  version.addEventListener('change', fillSteps);
  fillSteps();
  const data = h('textarea', {
    rows: 4,
    cols: 60,
    'aria-label': `sample data for ${flow.id}`,
    'data-testid': `step-test-data-${flow.id}`,
  });
  data.value = '{"trigger": {"body": {}}}';
  const answer = h('div', { 'data-testid': `step-test-answer-${flow.id}` });
  const problem = h('span', { class: 'muted', role: 'status' });
  const run = h(
    'button',
    {
      type: 'button',
      'data-testid': `step-test-run-${flow.id}`,
      onclick: () => {
        let sample: unknown;
        try {
          sample = JSON.parse(data.value);
        } catch {
          show(problem, 'The sample data is not JSON.');
          return;
        }
        if (typeof sample !== 'object' || sample === null || Array.isArray(sample)) {
          show(problem, 'The sample data is a JSON object, by step or trigger name.');
          return;
        }
        show(problem);
        show(answer, h('span', { class: 'muted' }, `Running ${step.value} on a worker…`));
        run.disabled = true;
        const wanted = version.value === flow.publishedVersionId ? undefined : version.value;
        void context.api
          .testStep(flow.id, step.value, sample as Record<string, unknown>, wanted)
          .then(
            (result) => show(answer, resultOf(result)),
            (error: unknown) => {
              show(answer);
              if (error instanceof ApiError) show(problem, `${error.code}: ${error.message}`);
              else context.fail(error);
            },
          )
          .finally(() => {
            run.disabled = false;
          });
      },
    },
    'Test step',
  );
  return [
    h('label', {}, 'Version '),
    version,
    h('label', {}, ' Step '),
    step,
    h('label', {}, 'Sample outputs of the steps before it (JSON, by step or trigger name)'),
    data,
    run,
    problem,
    answer,
  ];
}

/** The piece and code steps, routers' branches and loops' bodies included, in definition order. */
function leafNames(steps: readonly Step[]): string[] {
  return steps.flatMap((step): string[] => {
    switch (step.type) {
      case 'piece':
      case 'code':
        return [step.name];
      case 'router':
        return [
          ...step.branches.flatMap((branch) => leafNames(branch.steps)),
          ...leafNames(step.otherwise ?? []),
        ];
      case 'loop':
        return leafNames(step.steps);
      default:
        return [];
    }
  });
}

function resultOf(result: StepTestResult): HTMLElement {
  return h(
    'div',
    {},
    statusBadge(result.status),
    h('span', { class: 'muted' }, ` ${Math.round(result.durationMs)} ms`),
    result.error === undefined
      ? null
      : h(
          'pre',
          { class: 'error', 'data-testid': 'step-test-error' },
          `${result.error.code}: ${result.error.message}`,
        ),
    result.output === undefined
      ? null
      : h('pre', { 'data-testid': 'step-test-output' }, JSON.stringify(result.output, null, 2)),
    ...(result.logs ?? []).map((line) => h('pre', { class: 'muted' }, `${line.level}: ${line.message}`)),
  );
}
