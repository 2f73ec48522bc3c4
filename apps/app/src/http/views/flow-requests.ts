import { FlowDefinitionSchema } from '@flowbox/protocol';
import { z } from 'zod';

/** A definition as a request gives it (fields with defaults may be left out). */
const FlowDefinitionInput = FlowDefinitionSchema.meta({ id: 'FlowDefinitionInput' });

/** The management API's request bodies for flows, as documented. */
export const FLOW_ID = /^[a-z0-9][a-z0-9-]{2,62}$/;

export const CreateFlowBody = z
  .object({
    id: z.string().regex(FLOW_ID, 'must be 3-63 lowercase letters, digits or -').optional(),
    name: z.string().min(1).max(200),
    definition: FlowDefinitionInput,
    publish: z.boolean().default(false).describe('Publish version 1 right away.'),
  })
  .meta({ id: 'CreateFlowRequest' });

export const AddVersionBody = z
  .object({ definition: FlowDefinitionInput, publish: z.boolean().default(false) })
  .meta({ id: 'AddVersionRequest' });

export const UpdateFlowBody = z
  .object({ name: z.string().min(1).max(200).optional(), enabled: z.boolean().optional() })
  .refine((body) => body.name !== undefined || body.enabled !== undefined, 'give name or enabled')
  .meta({ id: 'UpdateFlowRequest', description: 'At least one of name and enabled.' });

export const FlowParams = z.object({ flowId: z.string() });
export const FlowVersionParams = z.object({ flowId: z.string(), versionId: z.string() });

/**
 * What the handlers parse (400 INVALID_REQUEST with the issues): the same, but `definition` is
 * left to validateFlowDefinition, which also knows the pieces and says which step is wrong.
 */
export const CreateFlowInput = CreateFlowBody.extend({ definition: z.unknown() });
export const AddVersionInput = AddVersionBody.extend({ definition: z.unknown() });
