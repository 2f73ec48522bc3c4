import { describe, expect, it } from 'vitest';
import { warmUpSchemas } from './snapshot-warm-up.ts';

describe('the startup snapshot warm-up', () => {
  // The snapshot build runs it; a sample that drifted from the protocol would fail there.
  it('parses every sample with the schema the engine uses for it', () => {
    expect(() => warmUpSchemas()).not.toThrow();
  });
});
