import { FlowDefinitionSchema, type StepDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { templateScopeProblems } from './template-scope.ts';

const code = (name: string, input: Record<string, unknown> = {}) => ({
  type: 'code',
  name,
  code: 'return 1;',
  input,
});

function problemsOf(steps: unknown[]): string[] {
  const definition = FlowDefinitionSchema.parse({
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
    steps,
  });
  return templateScopeProblems(definition);
}

/** route (big → notify, check; otherwise → fallback), then each over items (line, then inner over line.parts → part). */
function tree(
  change: {
    notify?: unknown;
    after?: unknown;
    line?: unknown;
    part?: unknown;
    items?: unknown;
    when?: unknown;
  } = {},
): unknown[] {
  return [
    code('first'),
    {
      type: 'router',
      name: 'route',
      mode: 'first',
      branches: [
        {
          name: 'big',
          when: [[{ left: change.when ?? '{{trigger.body.total}}', op: 'gt', right: 100 }]],
          steps: [code('notify', { v: change.notify ?? '{{first}}' }), code('check', { n: '{{notify}}' })],
        },
      ],
      otherwise: [code('fallback', { v: '{{first}}' })],
    },
    {
      type: 'loop',
      name: 'each',
      items: change.items ?? '{{trigger.body.items}}',
      steps: [
        code('line', { item: change.line ?? '{{each.item}}', i: '{{each.index}}', r: '{{route.branch}}' }),
        {
          type: 'loop',
          name: 'inner',
          items: '{{each.item.parts}}',
          steps: [
            code('part', { v: change.part ?? '{{inner.item}}', outer: '{{each.item.sku}}', l: '{{line}}' }),
          ],
        },
      ],
    },
    code('after', { v: change.after ?? '{{each.iterations}}', r: '{{route.branch}}' }),
  ] satisfies unknown[] as StepDefinition[];
}

describe('templateScopeProblems', () => {
  it('takes the trigger, earlier steps, enclosing loops’ item and index, and ended routers and loops', () => {
    expect(problemsOf(tree())).toEqual([]);
  });

  it('refuses a step inside a branch read from after the router, naming both steps and the path', () => {
    expect(problemsOf(tree({ after: '{{notify.result}}' }))).toEqual([
      "definition.steps.3.input.v: template {{notify.result}} in step 'after' names step 'notify' (route/big/notify) in router 'route''s branch 'big', which step 'after' is not in: that branch may not have run; read {{route.branch}} after the router",
    ]);
  });

  it('refuses a step of a loop body read from after the loop', () => {
    expect(problemsOf(tree({ after: '{{line}}' }))).toEqual([
      expect.stringMatching(
        /^definition\.steps\.3\.input\.v: template \{\{line\}\} in step 'after' names step 'line' \(each\/line\) in loop 'each''s body, .* read \{\{each\.iterations\}\} after the loop$/,
      ),
    ]);
  });

  it('refuses a step of an inner loop read from the outer loop’s body', () => {
    const steps = tree();
    const each = steps[2] as { steps: unknown[] };
    each.steps.push(code('tail', { v: '{{part}}' }));
    expect(problemsOf(steps)).toEqual([
      expect.stringContaining("names step 'part' (each/inner/part) in loop 'inner''s body"),
    ]);
  });

  it('refuses the loop itself from its body except item and index, and item after the loop', () => {
    expect(problemsOf(tree({ line: '{{each.iterations}}' }))).toEqual([
      expect.stringMatching(
        /^definition\.steps\.2\.steps\.0\.input\.item: template \{\{each\.iterations\}\} in step 'line' names loop 'each' from inside its body/,
      ),
    ]);
    expect(problemsOf(tree({ after: '{{each.item}}' }))).toEqual([
      expect.stringContaining("names {{each.item}} outside loop 'each''s body"),
    ]);
    expect(problemsOf(tree({ items: '{{each.item}}' }))).toEqual([
      "definition.steps.2.items: template {{each.item}} in step 'each' names step 'each' itself",
    ]);
  });

  it('refuses an inner loop’s item in the outer body, and the router from its own branch', () => {
    const steps = tree({ line: '{{inner.item}}', notify: '{{route.branch}}' });
    expect(problemsOf(steps)).toEqual([
      expect.stringMatching(
        /^definition\.steps\.1\.branches\.0\.steps\.0\.input\.v: .* names router 'route' from inside its own branch/,
      ),
      expect.stringMatching(
        /^definition\.steps\.2\.steps\.0\.input\.item: .* names step 'inner' \(each\/inner\), which runs after step 'line' \(each\/line\)$/,
      ),
    ]);
  });

  it('refuses a later step, a step of another branch, and a step that does not exist', () => {
    expect(problemsOf(tree({ notify: '{{check}}' }))).toEqual([
      expect.stringContaining(
        "names step 'check' (route/big/check), which runs after step 'notify' (route/big/notify)",
      ),
    ]);
    const steps = tree();
    const route = steps[1] as { otherwise: { input: unknown }[] };
    (route.otherwise[0] as { input: unknown }).input = { v: '{{notify}}' };
    expect(problemsOf(steps)).toEqual([
      expect.stringMatching(
        /^definition\.steps\.1\.otherwise\.0\.input\.v: template \{\{notify\}\} in step 'fallback' names step 'notify' \(route\/big\/notify\) in router 'route''s branch 'big'/,
      ),
    ]);
    expect(problemsOf(tree({ part: '{{nope.x}}' }))).toEqual([
      expect.stringContaining("in step 'part' names 'nope', which is not the trigger or a step of this flow"),
    ]);
  });

  it('checks a router’s conditions at the router: its own branches’ steps are out of scope', () => {
    expect(problemsOf(tree({ when: '{{notify.result}}' }))).toEqual([
      expect.stringMatching(
        /^definition\.steps\.1\.branches\.0\.when\.0\.0\.left: template \{\{notify\.result\}\} in step 'route' names step 'notify'/,
      ),
    ]);
  });

  it('checks a stop step’s response and refuses reading a stop step', () => {
    const steps = [
      code('first'),
      {
        type: 'stop',
        name: 'done',
        message: 'at {{first.n}}',
        response: { status: 200, body: { total: '{{later}}' } },
      },
      code('later', { d: '{{done}}' }),
    ];
    expect(problemsOf(steps)).toEqual([
      expect.stringMatching(
        /^definition\.steps\.1\.response\.body\.total: template \{\{later\}\} in step 'done' names step 'later' \(later\), which runs after/,
      ),
      expect.stringContaining("names stop step 'done', which ends the run and has no output"),
    ]);
  });

  it('takes {{waits.<wait>.<url>}} of a wait step, and a loop body its own waits only', () => {
    const wait = (name: string) => ({ type: 'wait', name, kind: 'approval' });
    expect(
      problemsOf([
        code('ask', { a: '{{waits.approval.approveUrl}}', b: '{{waits.approval}}' }),
        wait('approval'),
        {
          type: 'loop',
          name: 'each',
          items: [1, 2],
          steps: [code('tell', { u: '{{waits.reply.resumeUrl}}' }), { type: 'wait', name: 'reply' }],
        },
      ]),
    ).toEqual([]);
    expect(
      problemsOf([
        code('ask', {
          a: '{{waits.ask.resumeUrl}}',
          b: '{{waits.approval.secret}}',
          c: '{{waits.reply.resumeUrl}}',
          d: '{{waits}}',
        }),
        wait('approval'),
        { type: 'loop', name: 'each', items: [1], steps: [{ type: 'wait', name: 'reply' }] },
      ]),
    ).toEqual([
      "definition.steps.0.input.a: template {{waits.ask.resumeUrl}} in step 'ask' names 'waits.ask', and 'ask' is not a wait step of this flow",
      "definition.steps.0.input.b: template {{waits.approval.secret}} in step 'ask' names 'waits.approval.secret': a wait's URLs are resumeUrl, syncUrl, approveUrl, rejectUrl",
      "definition.steps.0.input.c: template {{waits.reply.resumeUrl}} in step 'ask' names the URLs of wait 'reply' in loop 'each''s body, which step 'ask' is not in: they differ per iteration",
      "definition.steps.0.input.d: template {{waits}} in step 'ask' names 'waits' without a wait step: write {{waits.<wait>.resumeUrl}}",
    ]);
  });
});
