import { randomBytes } from 'node:crypto';
import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { FlowPublisher } from '../flows/flow-publisher.ts';
import { validateFlowDefinition } from '../flows/flow-validator.ts';
import type { FlowRecord, FlowsRepository, FlowVersionRecord } from '../flows/flows-repository.ts';
import type { PieceCatalog } from '../pieces/piece-catalog.ts';
import { ROUTE_SCHEMAS } from './api-schemas.ts';

const FLOW_ID = /^[a-z0-9][a-z0-9-]{2,62}$/;

const CreateFlowBody = z.object({
  id: z.string().regex(FLOW_ID, 'must be 3-63 lowercase letters, digits or -').optional(),
  name: z.string().min(1).max(200),
  definition: z.unknown(),
  /** Publish version 1 right away. */
  publish: z.boolean().default(false),
});
const AddVersionBody = z.object({ definition: z.unknown(), publish: z.boolean().default(false) });
const UpdateFlowBody = z
  .object({ name: z.string().min(1).max(200).optional(), enabled: z.boolean().optional() })
  .refine((body) => body.name !== undefined || body.enabled !== undefined, 'give name or enabled');

export interface FlowRouteDeps {
  flows: FlowsRepository;
  publisher: FlowPublisher;
  catalog: PieceCatalog;
}

type FlowParams = { Params: { flowId: string } };
type VersionParams = { Params: { flowId: string; versionId: string } };

/**
 * The management API for flows: create from a JSON definition, add versions, publish (which
 * builds the bundle), list, enable and disable. Behind the API key (see app.ts).
 */
export function registerFlowRoutes(app: FastifyInstance, deps: FlowRouteDeps): void {
  app.post('/v1/flows', { schema: ROUTE_SCHEMAS.createFlow }, async (request, reply) => {
    const body = parse(CreateFlowBody, request.body);
    const definition = validateFlowDefinition(body.definition, deps.catalog);
    const id = body.id ?? `flow-${randomBytes(6).toString('hex')}`;
    let version = await deps.flows.createFlow({ id, name: body.name, definition });
    if (version === null) throw new FlowboxError('INVALID_REQUEST', `flow ${id} already exists`);
    if (body.publish) version = await deps.publisher.publish(version);
    return reply.status(201).send({ flow: await mustGetFlow(deps.flows, id), version: versionView(version) });
  });

  app.get('/v1/flows', { schema: ROUTE_SCHEMAS.listFlows }, async () => ({
    flows: await deps.flows.listFlows(),
  }));

  app.get<FlowParams>('/v1/flows/:flowId', { schema: ROUTE_SCHEMAS.getFlow }, async (request) =>
    mustGetFlow(deps.flows, request.params.flowId),
  );

  app.patch<FlowParams>('/v1/flows/:flowId', { schema: ROUTE_SCHEMAS.updateFlow }, async (request) => {
    const changes = parse(UpdateFlowBody, request.body);
    const flow = await deps.flows.update(request.params.flowId, changes);
    if (flow === null) throw notFound(request.params.flowId);
    return flow;
  });

  /**
   * Soft delete: webhooks answer 404 from now on, on every app (the run's INSERT checks); the
   * flow's runs stay readable until retention takes them, and its versions stay for them.
   */
  app.delete<FlowParams>(
    '/v1/flows/:flowId',
    { schema: ROUTE_SCHEMAS.deleteFlow },
    async (request, reply) => {
      if (!(await deps.flows.delete(request.params.flowId))) throw notFound(request.params.flowId);
      return reply.status(204).send();
    },
  );

  app.get<FlowParams>(
    '/v1/flows/:flowId/versions',
    { schema: ROUTE_SCHEMAS.listVersions },
    async (request) => {
      await mustGetFlow(deps.flows, request.params.flowId);
      return { versions: (await deps.flows.listVersions(request.params.flowId)).map(versionView) };
    },
  );

  app.post<FlowParams>(
    '/v1/flows/:flowId/versions',
    { schema: ROUTE_SCHEMAS.addVersion },
    async (request, reply) => {
      const body = parse(AddVersionBody, request.body);
      await mustGetFlow(deps.flows, request.params.flowId);
      const definition = validateFlowDefinition(body.definition, deps.catalog);
      let version = await deps.flows.addVersion(request.params.flowId, definition);
      if (body.publish) version = await deps.publisher.publish(version);
      return reply.status(201).send({ version: versionView(version) });
    },
  );

  app.post<VersionParams>(
    '/v1/flows/:flowId/versions/:versionId/publish',
    { schema: ROUTE_SCHEMAS.publishVersion },
    async (request) => {
      await mustGetFlow(deps.flows, request.params.flowId);
      const version = await deps.flows.getVersion(request.params.versionId);
      if (version === null || version.flowId !== request.params.flowId) {
        throw new FlowboxError(
          'FLOW_VERSION_NOT_FOUND',
          `flow ${request.params.flowId} has no version ${request.params.versionId}`,
        );
      }
      return { version: versionView(await deps.publisher.publish(version)) };
    },
  );
}

function versionView(version: FlowVersionRecord) {
  return {
    id: version.id,
    flowId: version.flowId,
    number: version.number,
    definition: version.definition,
    published: version.publishedAt !== null,
    bundle:
      version.bundle === null
        ? null
        : {
            sha256: version.bundle.sha256,
            sizeBytes: version.bundle.sizeBytes,
            pieces: version.bundle.pieces,
          },
    createdAt: version.createdAt,
    publishedAt: version.publishedAt,
  };
}

async function mustGetFlow(flows: FlowsRepository, flowId: string): Promise<FlowRecord> {
  const flow = await flows.getFlow(flowId);
  if (flow === null) throw notFound(flowId);
  return flow;
}

function notFound(flowId: string): FlowboxError {
  return new FlowboxError('FLOW_NOT_FOUND', `flow ${flowId} not found`);
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(result.error.issues));
  return result.data;
}
