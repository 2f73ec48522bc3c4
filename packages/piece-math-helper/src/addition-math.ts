import { createAction } from '@flowbox/pieces-framework';
import { z } from 'zod';

/** Adds two numbers; strings from templates are coerced, and anything non-numeric is rejected. */
export const additionMath = createAction({
  name: 'addition_math',
  description: 'Adds a and b.',
  input: z.object({ a: z.coerce.number(), b: z.coerce.number() }),
  run: (input) => ({ result: input.a + input.b }),
});
