import { randomBytes } from 'node:crypto';
import { FlowboxError, type FlowDefinition, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { RefusedDeliveriesRepository } from '../deliveries/refused-deliveries-repository.ts';
import type { FlowPublisher } from '../flows/flow-publisher.ts';
import type { FlowLimits } from '../flows/flow-tree-check.ts';
import { validateFlowDefinition } from '../flows/flow-validator.ts';
import type { FlowRecord, FlowsRepository, FlowVersionRecord } from '../flows/flows-repository.ts';
import { publishWarnings } from '../flows/publish-warnings.ts';
import { subflowWarnings } from '../flows/subflow-warnings.ts';
import type { PieceRegistry } from '../pieces/piece-registry.ts';
import { checkScheduleTrigger } from '../schedules/schedule-spec.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { AddVersionInput, CreateFlowInput, UpdateFlowBody } from './views/flow-requests.ts';
import { RefusedDeliveriesQuery } from './views/refused-delivery-view.ts';

export interface FlowRouteDeps {
  flows: FlowsRepository;
  publisher: FlowPublisher;
  registry: PieceRegistry;
  /** SCHEDULE_MIN_INTERVAL_SECONDS: the floor a schedule trigger is checked against. */
  scheduleMinIntervalSeconds: number;
  /** What a definition's tree is held to (FLOW_MAX_DEPTH, FLOW_MAX_STEPS, FLOW_TIMEOUT_SECONDS). */
  limits: FlowLimits;
  refusedDeliveries: Pick<RefusedDeliveriesRepository, 'list'>;
}

type FlowParams = { Params: { flowId: string } };
type VersionParams = { Params: { flowId: string; versionId: string } };

/**
 * The management API for flows: create from a JSON definition, add versions, publish (which
 * builds the bundle), list, enable and disable. Behind the API key (see app.ts).
 */
export function registerFlowRoutes(app: FastifyInstance, deps: FlowRouteDeps): void {
  /** What the author should know of a version it stores or publishes (it can run). */
  const flowWarnings = async (definition: FlowDefinition): Promise<string[]> => [
    ...publishWarnings(definition),
    ...(await subflowWarnings(definition, deps.flows)),
  ];
  app.route({
    ...apiRoute(OPS.createFlow),
    handler: async (request, reply) => {
      const body = parse(CreateFlowInput, request.body);
      const definition = validateFlowDefinition(body.definition, await deps.registry.index(), deps.limits);
      checkScheduleTrigger(definition.trigger, { minIntervalSeconds: deps.scheduleMinIntervalSeconds });
      const id = body.id ?? `flow-${randomBytes(6).toString('hex')}`;
      const checks = body.publish ? await deps.publisher.check(id, definition) : undefined;
      // Created and published in one transaction: a refused publish leaves no flow behind.
      const version = await deps.flows.createFlow(
        { id, name: body.name, definition },
        checks === undefined ? undefined : (created) => deps.publisher.prepare(created, checks),
      );
      if (version === null) throw new FlowboxError('INVALID_REQUEST', `flow ${id} already exists`);
      return reply.status(201).send({
        flow: await mustGetFlow(deps.flows, id),
        version: versionView(version),
        warnings: await flowWarnings(definition),
      });
    },
  });

  app.route({
    ...apiRoute(OPS.listFlows),
    handler: async () => ({ flows: await deps.flows.listFlows() }),
  });

  app.route<FlowParams>({
    ...apiRoute(OPS.getFlow),
    handler: async (request) => mustGetFlow(deps.flows, request.params.flowId),
  });

  app.route<FlowParams>({
    ...apiRoute(OPS.updateFlow),
    handler: async (request) => {
      const changes = parse(UpdateFlowBody, request.body);
      const flow = await deps.flows.update(request.params.flowId, changes);
      if (flow === null) throw notFound(request.params.flowId);
      return flow;
    },
  });

  /**
   * Soft delete: webhooks answer 404 from now on, on every app (the run's INSERT checks); the
   * flow's runs stay readable until retention takes them, and its versions stay for them.
   */
  app.route<FlowParams>({
    ...apiRoute(OPS.deleteFlow),
    handler: async (request, reply) => {
      if (!(await deps.flows.delete(request.params.flowId))) throw notFound(request.params.flowId);
      return reply.status(204).send();
    },
  });

  app.route<FlowParams>({
    ...apiRoute(OPS.listFlowVersions),
    handler: async (request) => {
      await mustGetFlow(deps.flows, request.params.flowId);
      return { versions: (await deps.flows.listVersions(request.params.flowId)).map(versionView) };
    },
  });

  app.route<FlowParams>({
    ...apiRoute(OPS.addFlowVersion),
    handler: async (request, reply) => {
      const body = parse(AddVersionInput, request.body);
      await mustGetFlow(deps.flows, request.params.flowId);
      const definition = validateFlowDefinition(body.definition, await deps.registry.index(), deps.limits);
      checkScheduleTrigger(definition.trigger, { minIntervalSeconds: deps.scheduleMinIntervalSeconds });
      const checks = body.publish ? await deps.publisher.check(request.params.flowId, definition) : undefined;
      const version = await deps.flows.addVersion(
        request.params.flowId,
        definition,
        checks === undefined ? undefined : (added) => deps.publisher.prepare(added, checks),
      );
      return reply
        .status(201)
        .send({ version: versionView(version), warnings: await flowWarnings(definition) });
    },
  });

  app.route<FlowParams>({
    ...apiRoute(OPS.listRefusedDeliveries),
    handler: async (request) => {
      const { limit } = parse(RefusedDeliveriesQuery, request.query);
      await mustGetFlow(deps.flows, request.params.flowId);
      return { deliveries: await deps.refusedDeliveries.list(request.params.flowId, limit) };
    },
  });

  app.route<VersionParams>({
    ...apiRoute(OPS.publishFlowVersion),
    handler: async (request) => {
      await mustGetFlow(deps.flows, request.params.flowId);
      const version = await deps.flows.getVersion(request.params.versionId);
      if (version === null || version.flowId !== request.params.flowId) {
        throw new FlowboxError(
          'FLOW_VERSION_NOT_FOUND',
          `flow ${request.params.flowId} has no version ${request.params.versionId}`,
        );
      }
      const published = await deps.publisher.publish(version);
      return { version: versionView(published), warnings: await flowWarnings(published.definition) };
    },
  });
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
