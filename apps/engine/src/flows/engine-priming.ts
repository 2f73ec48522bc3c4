import { serializeError, wrapCodeStep } from '@flowbox/protocol';
import { openCodeStepSession } from '../code-steps/code-step-host.ts';
import type { FlowExecutorDeps } from './flow-executor-deps.ts';

/** What priming an engine before its first job uses. */
type PrimingDeps = Pick<FlowExecutorDeps, 'codeRunners' | 'http' | 'log'>;

/**
 * A trivial code step in isolated-vm before any job, so the isolate of the job's size exists and
 * the runner's path is compiled. It sees no job's data; its context is released.
 */
export async function primeCodeRunner(deps: PrimingDeps, memoryMb: number): Promise<void> {
  const session = openCodeStepSession(() => Promise.reject(new Error('no fetch while priming')));
  try {
    await deps.codeRunners.SANDBOX_CODE_ONLY.run({
      source: wrapCodeStep('return null;'),
      inputs: null,
      timeoutMs: PRIME_TIMEOUT_MS,
      memoryMb,
      host: session.host,
    });
  } catch (error) {
    deps.log('warn', 'could not prime the code runner', { error: serializeError(error) });
  } finally {
    session.close();
  }
}

/**
 * One `GET /health/live` before any job (no credentials, nothing recorded), so the callbacks'
 * keep-alive connection is open and the HTTP client, which a snapshot cannot hold, is compiled.
 */
export async function primeAppConnection(deps: PrimingDeps, appUrl: string): Promise<void> {
  try {
    await deps.http.request({
      method: 'GET',
      url: `${appUrl.replace(/\/+$/, '')}/health/live`,
      headers: {},
      body: '',
      timeoutMs: PRIME_TIMEOUT_MS,
    });
  } catch (error) {
    deps.log('debug', 'could not prime the connection to the app', { error: serializeError(error) });
  }
}

const PRIME_TIMEOUT_MS = 5_000;
