import { createPiece } from '@flowbox/pieces-framework';
import { additionMath } from './addition-math.ts';

export const mathHelperPiece = createPiece({
  name: 'math-helper',
  version: '0.1.0',
  actions: [additionMath],
});
