import { createPiece, createTrigger } from '@flowbox/pieces-framework';
import pkg from '../package.json' with { type: 'json' };
import { tickOutput } from './tick-output.ts';

/**
 * The schedule triggers. The app reads their input (`expression`, `timezone`, `seconds`,
 * `catchUp`, `overlap`), checks it at publish and fires the ticks (apps/app/src/schedules); the
 * trigger only hands the tick to the flow.
 */
export const cron = createTrigger({
  name: 'cron',
  description:
    'Starts the flow at each time a cron expression (5 or 6 fields) names in a time zone; the output is { scheduledAt, firedAt }.',
  run: (payload) => tickOutput(payload),
});

export const every = createTrigger({
  name: 'every',
  description:
    'Starts the flow every `seconds` seconds (at multiples of it since the Unix epoch); the output is { scheduledAt, firedAt }.',
  run: (payload) => tickOutput(payload),
});

// Name and version live in package.json, which the build also reads for the archive's manifest.
export const schedulePiece = createPiece({
  name: pkg.flowbox.piece.name,
  version: pkg.version,
  triggers: [cron, every],
});

/** The piece archive's entry (`index.mjs`) exports the piece as its default. */
export default schedulePiece;
