import type {
  ConnectionView,
  FlowPoll,
  FlowSchedule,
  FlowView,
  PieceDetail,
  PieceSummary,
  RefusedDeliveryView,
  RunPage,
  RunStats,
  RunView,
  StepTestResult,
  VersionView,
} from './api-types.ts';

/** The API key lives in this tab's sessionStorage only: gone when the tab closes. */
const KEY_ITEM = 'flowbox.apiKey';

export class Unauthorized extends Error {}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The management API, with `authorization: Bearer <key>` on every call. */
export class Api {
  readonly #storage: Storage;

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  get key(): string | null {
    return this.#storage.getItem(KEY_ITEM);
  }

  set key(value: string | null) {
    if (value === null) this.#storage.removeItem(KEY_ITEM);
    else this.#storage.setItem(KEY_ITEM, value);
  }

  flows(): Promise<{ flows: FlowView[] }> {
    return this.#call('GET', '/v1/flows');
  }

  flow(flowId: string): Promise<FlowView> {
    return this.#call('GET', `/v1/flows/${encodeURIComponent(flowId)}`);
  }

  /** 204: its webhooks answer 404 from now on; its runs stay readable. */
  deleteFlow(flowId: string): Promise<null> {
    return this.#call('DELETE', `/v1/flows/${encodeURIComponent(flowId)}`);
  }

  versions(flowId: string): Promise<{ versions: VersionView[] }> {
    return this.#call('GET', `/v1/flows/${encodeURIComponent(flowId)}/versions`);
  }

  /** The flow's webhooks refused before any run existed, newest first. */
  refusedDeliveries(flowId: string): Promise<{ deliveries: RefusedDeliveryView[] }> {
    return this.#call('GET', `/v1/flows/${encodeURIComponent(flowId)}/deliveries/refused`);
  }

  setEnabled(flowId: string, enabled: boolean): Promise<FlowView> {
    return this.#call('PATCH', `/v1/flows/${encodeURIComponent(flowId)}`, { enabled });
  }

  publish(flowId: string, versionId: string): Promise<{ version: VersionView }> {
    return this.#call(
      'POST',
      `/v1/flows/${encodeURIComponent(flowId)}/versions/${encodeURIComponent(versionId)}/publish`,
    );
  }

  /** A run by hand with this payload as the trigger's body (202, async). */
  startRun(flowId: string, payload: Record<string, unknown>): Promise<{ runId: string }> {
    return this.#call('POST', `/v1/flows/${encodeURIComponent(flowId)}/runs`, payload);
  }

  /** One step run alone on a worker over sample data; `version` absent: the published one. */
  testStep(
    flowId: string,
    stepName: string,
    data: Record<string, unknown>,
    version: string | undefined,
  ): Promise<StepTestResult> {
    return this.#call(
      'POST',
      `/v1/flows/${encodeURIComponent(flowId)}/steps/${encodeURIComponent(stepName)}/test`,
      { data, ...(version === undefined ? {} : { version }) },
    );
  }

  schedule(flowId: string): Promise<FlowSchedule> {
    return this.#call('GET', `/v1/flows/${encodeURIComponent(flowId)}/schedule`);
  }

  /** A polling flow's polls; 404 FLOW_NOT_FOUND when its trigger does not poll or never polled. */
  poll(flowId: string): Promise<FlowPoll> {
    return this.#call('GET', `/v1/flows/${encodeURIComponent(flowId)}/poll`);
  }

  /** `since`/`until` bound the creation time; `payload` is text the trigger's body holds. */
  runs(query: {
    flowId?: string;
    status?: string;
    since?: string;
    until?: string;
    payload?: string;
    cursor?: string;
    limit: number;
  }): Promise<RunPage> {
    return this.#call('GET', `/v1/runs?${params({ ...query, order: 'newest' })}`);
  }

  run(runId: string): Promise<RunView> {
    return this.#call('GET', `/v1/runs/${encodeURIComponent(runId)}`);
  }

  /**
   * A new run with the same request (202, async), on the same flow version or (`latest`) the
   * flow's published one; from `failed`, the steps that succeeded are replayed, not run again.
   */
  rerun(
    runId: string,
    version: 'run' | 'latest' = 'run',
    from: 'start' | 'failed' = 'start',
  ): Promise<{ runId: string; rerunOf: string; replayed?: number }> {
    return this.#call('POST', `/v1/runs/${encodeURIComponent(runId)}/rerun`, { version, from });
  }

  stats(query: { flowId?: string; windowSeconds: number; bucketSeconds: number }): Promise<RunStats> {
    return this.#call('GET', `/v1/runs/stats?${params(query)}`);
  }

  connections(): Promise<{ connections: ConnectionView[] }> {
    return this.#call('GET', '/v1/connections');
  }

  pieces(): Promise<{ pieces: PieceSummary[] }> {
    return this.#call('GET', '/v1/pieces');
  }

  piece(name: string): Promise<PieceDetail> {
    return this.#call('GET', `/v1/pieces/${encodeURIComponent(name)}`);
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const key = this.key;
    if (key === null) throw new Unauthorized('no API key');
    const response = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      cache: 'no-store',
    });
    if (response.status === 401) throw new Unauthorized('the API key was refused');
    if (response.status === 204) return null as T;
    const answer = (await response.json().catch(() => null)) as unknown;
    if (!response.ok) {
      const error = (answer as { error?: { code?: string; message?: string } } | null)?.error;
      throw new ApiError(response.status, error?.code ?? 'HTTP_ERROR', error?.message ?? response.statusText);
    }
    return answer as T;
  }
}

function params(query: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') search.set(name, String(value));
  }
  return search.toString();
}
