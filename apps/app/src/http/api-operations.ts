import type { ApiOperation } from './api-operation.ts';
import { CONNECTION_OPERATIONS } from './operations/connection-operations.ts';
import { DOCUMENT_OPERATIONS } from './operations/document-operations.ts';
import { FLOW_OPERATIONS } from './operations/flow-operations.ts';
import { HEALTH_OPERATIONS } from './operations/health-operations.ts';
import { MANUAL_RUN_OPERATIONS } from './operations/manual-run-operations.ts';
import { PIECE_OPERATIONS } from './operations/piece-operations.ts';
import { POLL_OPERATIONS } from './operations/poll-operations.ts';
import { RUN_OPERATIONS } from './operations/run-operations.ts';
import { SCHEDULE_OPERATIONS } from './operations/schedule-operations.ts';
import { STEP_TEST_OPERATIONS } from './operations/step-test-operations.ts';
import { WAIT_OPERATIONS } from './operations/wait-operations.ts';
import { WEBHOOK_OPERATIONS } from './operations/webhook-operations.ts';

/**
 * Every public route, by operationId (the engine's callbacks, the inspector and the Swagger UI
 * page are not). A new area adds its own file in operations/ and one line here; the document's
 * order is this one.
 */
export const API_OPERATIONS = {
  ...WEBHOOK_OPERATIONS,
  ...FLOW_OPERATIONS,
  ...MANUAL_RUN_OPERATIONS,
  ...SCHEDULE_OPERATIONS,
  ...STEP_TEST_OPERATIONS,
  ...POLL_OPERATIONS,
  ...RUN_OPERATIONS,
  ...WAIT_OPERATIONS,
  ...PIECE_OPERATIONS,
  ...CONNECTION_OPERATIONS,
  ...HEALTH_OPERATIONS,
  ...DOCUMENT_OPERATIONS,
} as const satisfies Record<string, ApiOperation>;

export type ApiOperationId = keyof typeof API_OPERATIONS;
