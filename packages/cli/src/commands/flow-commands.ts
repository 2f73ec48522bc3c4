import type { paths } from '../api/api-types.ts';
import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';
import type { LoadedFlow } from './flow-file.ts';

type FlowDefinitionBody =
  paths['/v1/flows']['post']['requestBody']['content']['application/json']['definition'];

/**
 * The file's definition as it is: the app checks it (shape, pieces and versions, templates, code)
 * and answers INVALID_FLOW naming the field, so there is one set of rules and a newer app's
 * fields are never dropped by an older CLI.
 */
function asBody(definition: unknown): FlowDefinitionBody {
  return definition as FlowDefinitionBody;
}

export interface PushedFlow {
  flowId: string;
  versionId: string;
  versionNumber: number;
  created: boolean;
  published: boolean;
  webhooks: { sync: string; async: string };
  /** What the app said the author should know (e.g. no step answers a sync caller). */
  warnings: string[];
}

/** Creates the flow (version 1) or adds a version to it; `publish` makes that version live. */
export async function pushFlow(
  api: ApiClient,
  baseUrl: string,
  flow: LoadedFlow,
  publish: boolean,
): Promise<PushedFlow> {
  const existing = await api.GET('/v1/flows/{flowId}', { params: { path: { flowId: flow.id } } });
  let created: boolean;
  let version: { id: string; number: number; published: boolean };
  // An app older than this CLI answers no warnings.
  let warnings: string[];
  if (existing.response.status === 404) {
    const { data } = await unwrap(
      api.POST('/v1/flows', {
        body: { id: flow.id, name: flow.name, definition: asBody(flow.definition), publish },
      }),
      `create flow ${flow.id}`,
    );
    created = true;
    version = data.version;
    warnings = data.warnings ?? [];
  } else {
    await unwrap(Promise.resolve(existing), `read flow ${flow.id}`);
    const { data } = await unwrap(
      api.POST('/v1/flows/{flowId}/versions', {
        params: { path: { flowId: flow.id } },
        body: { definition: asBody(flow.definition), publish },
      }),
      `add a version to flow ${flow.id}`,
    );
    created = false;
    version = data.version;
    warnings = data.warnings ?? [];
  }
  if (publish && !version.published)
    throw new CliError('INTERNAL', `flow ${flow.id}: version ${version.number} was not published`);
  return {
    flowId: flow.id,
    versionId: version.id,
    versionNumber: version.number,
    created,
    published: version.published,
    webhooks: webhookUrls(baseUrl, flow.id),
    warnings,
  };
}

export function webhookUrls(baseUrl: string, flowId: string): { sync: string; async: string } {
  const path = `${baseUrl}/v1/webhooks/${encodeURIComponent(flowId)}`;
  return { sync: `${path}/sync`, async: path };
}

export async function listFlows(api: ApiClient) {
  const { data } = await unwrap(api.GET('/v1/flows'), 'list flows');
  return data.flows;
}
