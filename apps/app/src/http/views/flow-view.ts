import { FlowDefinitionSchema, PieceRefSchema } from '@flowbox/protocol';
import { z } from 'zod';
import { DateTime } from './date-time.ts';

/** A flow's definition as stored (defaults filled in); requests take FlowDefinitionInput. */
export const FlowDefinitionView = FlowDefinitionSchema.meta({ id: 'FlowDefinition' });

export const FlowView = z
  .object({
    id: z.string(),
    name: z.string(),
    enabled: z.boolean().describe('A disabled flow answers its webhooks 404.'),
    publishedVersionId: z.string().nullable(),
    trigger: z
      .object({ piece: z.string(), trigger: z.string(), input: z.record(z.string(), z.unknown()) })
      .nullable()
      .describe(
        "The published version's trigger (`webhook` or `schedule`, with its input); null before a version is published.",
      ),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .meta({ id: 'Flow', description: 'A flow: its webhooks run its published version.' });
export type FlowView = z.infer<typeof FlowView>;

export const FlowVersionView = z
  .object({
    id: z.string(),
    flowId: z.string(),
    number: z.number().int().min(1),
    definition: FlowDefinitionView,
    published: z.boolean(),
    bundle: z
      .object({ sha256: z.string(), sizeBytes: z.number().int(), pieces: z.array(PieceRefSchema) })
      .nullable()
      .describe('The built bundle, once the version was published.'),
    createdAt: DateTime,
    publishedAt: DateTime.nullable(),
  })
  .meta({ id: 'FlowVersion', description: "One version of a flow's definition." });
export type FlowVersionView = z.infer<typeof FlowVersionView>;

export const FlowListView = z.object({ flows: z.array(FlowView) }).meta({ id: 'FlowList' });
/** What the author should know though the definition runs (publish-warnings.ts). */
const Warnings = z
  .array(z.string())
  .describe(
    'What the definition runs with but its author should know, e.g. that no step answers a sync caller (its sync webhook then answers 204 when the run succeeds). Empty when nothing.',
  );

export const CreatedFlowView = z
  .object({ flow: FlowView, version: FlowVersionView, warnings: Warnings })
  .meta({ id: 'CreatedFlow' });
export const FlowVersionListView = z
  .object({ versions: z.array(FlowVersionView) })
  .meta({ id: 'FlowVersionList' });
export const FlowVersionEnvelopeView = z
  .object({ version: FlowVersionView, warnings: Warnings })
  .meta({ id: 'FlowVersionEnvelope' });

export const FlowScheduleView = z
  .object({
    flowId: z.string(),
    trigger: z.enum(['cron', 'every']),
    catchUp: z.enum(['none', 'last']),
    overlap: z.enum(['allow', 'skip']),
    nextTicks: z.array(DateTime).describe('The next ticks from now, as the cron library computes them.'),
    passedTicks: z
      .array(
        z.object({
          scheduledAt: DateTime,
          outcome: z.enum(['skipped', 'missed']),
          reason: z.string().nullable().describe('`overlap`, `queue-full` or `catch-up-none`.'),
          missed: z.number().int().describe('Ticks passed over before this one (after an outage).'),
        }),
      )
      .describe('The latest ticks that started no run, newest first.'),
  })
  .meta({
    id: 'FlowSchedule',
    description: "A schedule flow's coming ticks and the latest it skipped or missed.",
  });
export type FlowScheduleView = z.infer<typeof FlowScheduleView>;

export const FlowPollView = z
  .object({
    flowId: z.string(),
    flowVersionId: z
      .string()
      .describe('The published version: polls, their state and item keys are per version.'),
    trigger: z.string().describe('`<piece>.<trigger>`.'),
    intervalSeconds: z.number().int(),
    startFrom: z.enum(['new', 'all']),
    baselineAt: DateTime.nullable().describe(
      'When the first poll recorded what the source held; null before.',
    ),
    lastPolledAt: DateTime.nullable().describe("The last poll's end, whether it succeeded or failed."),
    polling: z.boolean().describe('A poll is in flight now.'),
    polls: z.number().int().describe('Polls that ended, failed ones included.'),
    itemsFound: z.number().int().describe('Items recorded: the baseline and those that started a run.'),
    failures: z.number().int().describe('Polls failed in a row (0 after one that succeeded).'),
    lastError: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe("The last failed poll's error (kept after a later success; see `failures`)."),
    lastErrorAt: DateTime.nullable(),
  })
  .meta({ id: 'FlowPoll', description: "A polling flow's polls: where they stand and the last failure." });
export type FlowPollView = z.infer<typeof FlowPollView>;
