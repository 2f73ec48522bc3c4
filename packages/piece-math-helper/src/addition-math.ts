import { createAction, Property } from '@flowbox/pieces-framework';

/** Adds two numbers; strings from templates are coerced, and anything non-numeric is rejected. */
export const additionMath = createAction({
  name: 'addition_math',
  description: 'Adds a and b.',
  props: {
    a: Property.Number({ displayName: 'A', required: true }),
    b: Property.Number({ displayName: 'B', required: true }),
  },
  run: (input) => ({ result: input.a + input.b }),
});
