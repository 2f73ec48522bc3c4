import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';

export type RunPayload = Record<string, unknown>;

/** `--data`: a JSON object, or `@file` holding one (relative to `cwd`); none: `{}`. */
export async function readRunPayload(data: string | undefined, cwd: string): Promise<RunPayload> {
  if (data === undefined) return {};
  let text = data;
  let from = '--data';
  if (data.startsWith('@')) {
    from = resolve(cwd, data.slice(1));
    try {
      text = await readFile(from, 'utf8');
    } catch (error) {
      throw new CliError(
        'INVALID_DATA',
        `${from}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(
      'INVALID_DATA',
      `${from}: not JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CliError('INVALID_DATA', `${from}: the payload is a JSON object`);
  }
  return parsed as RunPayload;
}

/** Starts a run by hand (`POST /v1/flows/:flowId/runs`); returns its id. */
export async function startRun(api: ApiClient, flowId: string, payload: RunPayload): Promise<string> {
  const { data } = await unwrap(
    api.POST('/v1/flows/{flowId}/runs', { params: { path: { flowId } }, body: payload }),
    `run flow ${flowId}`,
  );
  return data.runId;
}

export interface SyncAnswer {
  runId: string | null;
  status: number;
  body: string;
}

/**
 * Runs the flow and waits (`…/runs/sync`): the flow's own answer, whatever its status. An error
 * flowbox answered (the flow does not exist, the run failed before it answered) throws with its
 * code, naming the run when there is one.
 */
export async function runSync(api: ApiClient, flowId: string, payload: RunPayload): Promise<SyncAnswer> {
  let answer: { data?: unknown; error?: unknown; response: Response };
  try {
    answer = await api.POST('/v1/flows/{flowId}/runs/sync', {
      params: { path: { flowId } },
      body: payload,
      parseAs: 'text',
    });
  } catch (error) {
    const cause =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new CliError('UNREACHABLE', `run flow ${flowId}: the app did not answer (${cause})`);
  }
  const { response } = answer;
  // A success is read as text; an error body is parsed as JSON when it is JSON.
  const read = answer.error ?? answer.data;
  const body = typeof read === 'string' ? read : JSON.stringify(read ?? '');
  const runId = response.headers.get('x-flowbox-run-id');
  const problem = flowboxError(body);
  if (response.status >= 400 && problem !== null) {
    throw new CliError(
      problem.code,
      `run flow ${flowId}${runId === null ? '' : ` (run ${runId})`}: ${problem.message}`,
    );
  }
  return { runId, status: response.status, body };
}

function flowboxError(body: string): { code: string; message: string } | null {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    return typeof code === 'string' && typeof message === 'string' ? { code, message } : null;
  } catch {
    return null;
  }
}
