import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { Connections } from '../connections/connections.ts';
import type { ConnectionSummary } from '../connections/connections-repository.ts';
import type { SigningSecrets } from '../connections/signing-secrets.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { type ConnectionView, CreateConnectionBody, UpdateConnectionBody } from './views/connection-view.ts';

type NameParams = { Params: { name: string } };

/**
 * The management API for connections: values go in (POST, PUT) and never come out; GET shows
 * names, dates and the flows that use each. Behind the API key (see app.ts).
 */
export function registerConnectionRoutes(
  app: FastifyInstance,
  deps: { connections: Connections; signingSecrets: SigningSecrets },
): void {
  app.route({
    ...apiRoute(OPS.createConnection),
    handler: async (request, reply) => {
      const body = parse(CreateConnectionBody, request.body);
      return reply.status(201).send(view(await deps.connections.create(body.name, body.value)));
    },
  });

  app.route({
    ...apiRoute(OPS.listConnections),
    handler: async () => ({ connections: (await deps.connections.list()).map(view) }),
  });

  app.route<NameParams>({
    ...apiRoute(OPS.getConnection),
    handler: async (request) => view(await deps.connections.get(request.params.name)),
  });

  app.route<NameParams>({
    ...apiRoute(OPS.updateConnection),
    handler: async (request) => {
      const body = parse(UpdateConnectionBody, request.body);
      const updated = await deps.connections.update(request.params.name, body.value);
      // This app checks signatures with the new value at once; others within SIGNING_SECRET_TTL_MS.
      deps.signingSecrets.forget();
      return view(updated);
    },
  });

  app.route<NameParams>({
    ...apiRoute(OPS.deleteConnection),
    handler: async (request, reply) => {
      await deps.connections.delete(request.params.name);
      deps.signingSecrets.forget();
      return reply.status(204).send();
    },
  });
}

function view(summary: ConnectionSummary): ConnectionView {
  return {
    name: summary.name,
    createdAt: summary.createdAt.toISOString(),
    updatedAt: summary.updatedAt.toISOString(),
    usedBy: summary.usedBy,
  };
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(result.error.issues));
  return result.data;
}
