import { StepTestAnswerSchema } from '@flowbox/protocol';
import { z } from 'zod';

export const StepTestParams = z.object({ flowId: z.string(), stepName: z.string() });

export const StepTestBody = z
  .object({
    data: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        'Sample outputs the step\'s templates read, by step or trigger name (`{ "trigger": {...}, "lookup": {...} }`); a loop\'s body step reads `{{<loop>.item}}` from `{ "<loop>": { "item": ..., "index": 0 } }`. `connections` is not read from here: the version\'s own are resolved.',
      ),
    version: z
      .string()
      .min(1)
      .optional()
      .describe('`latest`, or a version id of the flow; by default the published version (else the latest).'),
  })
  .meta({ id: 'StepTestRequest' });

export const StepTestView = StepTestAnswerSchema.extend({
  output: z.unknown().optional().describe("The step's output, with the run's secrets redacted."),
  logs: StepTestAnswerSchema.shape.logs.describe("A code step's console lines or a piece's `ctx.log` lines."),
}).meta({
  id: 'StepTestResult',
  description: "How the tested step ended: its output or its error (a code step's with its line and column).",
});
export type StepTestView = z.infer<typeof StepTestView>;
