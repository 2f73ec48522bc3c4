import createClient, { type Client } from 'openapi-fetch';
import { CliError } from '../cli-error.ts';
import type { CliConfig } from '../env.ts';
import type { paths } from './api-types.ts';

export type ApiClient = Client<paths>;

/** The typed client of the management API, with the API key on every request. */
export function createApiClient(config: CliConfig, fetchImpl: typeof fetch = fetch): ApiClient {
  const client = createClient<paths>({ baseUrl: config.url, fetch: fetchImpl });
  client.use({
    onRequest({ request }) {
      if (config.apiKey !== undefined) request.headers.set('authorization', `Bearer ${config.apiKey}`);
      return request;
    },
  });
  return client;
}

interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's body, or a CliError with the API's error code and message. */
export async function unwrap<T>(
  call: Promise<ApiResult<T>>,
  what: string,
): Promise<{ data: T; status: number }> {
  let result: ApiResult<T>;
  try {
    result = await call;
  } catch (error) {
    const cause =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new CliError(
      'UNREACHABLE',
      `${what}: the app did not answer (${cause}); is it running, and is FLOWBOX_URL right?`,
    );
  }
  if (result.error === undefined && result.response.ok)
    return { data: result.data as T, status: result.response.status };
  const body = result.error as { error?: { code?: unknown; message?: unknown } } | undefined;
  const code = typeof body?.error?.code === 'string' ? body.error.code : `HTTP_${result.response.status}`;
  const message =
    typeof body?.error?.message === 'string'
      ? body.error.message
      : `${result.response.status} ${result.response.statusText}`;
  throw new CliError(code, `${what}: ${message}`);
}
