import { randomUUID } from 'node:crypto';
import {
  FlowboxError,
  type RunOutcome,
  STEP_TEST_ID_PREFIX,
  type StepTest,
  type StepTestAnswer,
  type StepTestJobData,
} from '@flowbox/protocol';
import type { FlowPublisher } from '../flows/flow-publisher.ts';
import type { FlowsRepository } from '../flows/flows-repository.ts';
import type { RunQueue } from '../queue/run-queue.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import { testedStep, testedVersion } from './step-test-target.ts';

/**
 * Testing one step (step-test.ts in the protocol): the caller's request waits here, on this
 * instance, while a `test-step` job goes through the run queue to a worker like a run's; the app
 * that gets the worker's result sends the answer back over the sync hub (`answer`). No run row is
 * written and the job is tried once.
 */
export class StepTests {
  readonly #flows: FlowsRepository;
  readonly #publisher: Pick<FlowPublisher, 'prepare'>;
  readonly #queue: Pick<RunQueue, 'addTest' | 'remove'>;
  readonly #hub: SyncResponseHub;
  readonly #timeoutMs: number;

  constructor(deps: {
    flows: FlowsRepository;
    publisher: Pick<FlowPublisher, 'prepare'>;
    queue: Pick<RunQueue, 'addTest' | 'remove'>;
    hub: SyncResponseHub;
    /** WEBHOOK_TIMEOUT_SECONDS: how long a caller waits for a worker's answer. */
    timeoutMs: number;
  }) {
    this.#flows = deps.flows;
    this.#publisher = deps.publisher;
    this.#queue = deps.queue;
    this.#hub = deps.hub;
    this.#timeoutMs = deps.timeoutMs;
  }

  /** Runs `test.step` of the flow's version on a worker and resolves with its answer. */
  async run(flowId: string, test: StepTest, wanted: string | undefined): Promise<StepTestAnswer> {
    const version = await testedVersion(this.#flows, flowId, wanted);
    testedStep(version, test.step);
    // A version not yet published has no bundle recorded: built and stored as publishing would
    // (content-addressed, so testing it again stores nothing new), and not recorded.
    const prepared =
      version.bundle === null
        ? await this.#publisher.prepare(version)
        : { bundle: version.bundle, connections: version.connections };
    const testId = `${STEP_TEST_ID_PREFIX}${randomUUID()}`;
    const job: StepTestJobData = {
      version: 1,
      type: 'test-step',
      testId,
      flowId,
      flowVersionId: version.id,
      bundle: prepared.bundle,
      connections: prepared.connections,
      test,
      syncInstanceId: this.#hub.instanceId,
      acceptedAt: Date.now(),
    };
    // Listening before the job exists: a fast worker's answer cannot come first.
    const waiter = this.#hub.register(testId);
    try {
      await this.#queue.addTest(job);
    } catch (error) {
      waiter.cancel();
      throw error;
    }
    const outcome = await waiter.wait(this.#timeoutMs);
    if (outcome.type === 'step-tested') return outcome.answer;
    // Nobody will read its answer: a job still waiting goes (one a worker holds runs out).
    await this.#queue.remove(testId).catch(() => false);
    switch (outcome.type) {
      case 'shutdown':
        throw new FlowboxError(
          'APP_SHUTTING_DOWN',
          'this app instance is shutting down; test the step again',
        );
      case 'timeout':
      case 'caller-gone':
        throw new FlowboxError(
          'STEP_TEST_TIMEOUT',
          `no worker answered the test of step ${test.step} within ${this.#timeoutMs / 1000}s (WEBHOOK_TIMEOUT_SECONDS); nothing was recorded`,
        );
      default:
        // A test's engine sends no response: one that came with the test's token is not its answer.
        throw new FlowboxError(
          'INTERNAL',
          `the test of step ${test.step} was answered as a run (${outcome.type})`,
        );
    }
  }

  /** A test job's result, for its caller wherever it waits. */
  async answer(data: StepTestJobData, outcome: RunOutcome): Promise<void> {
    await this.#hub.publish(data.syncInstanceId, {
      version: 1,
      type: 'step-tested',
      runId: data.testId,
      answer: answerOf(data.test.step, outcome),
    });
  }
}

/** The tested step's record as the API answers it; a failure before the step ran has no record. */
export function answerOf(stepName: string, outcome: RunOutcome): StepTestAnswer {
  const step = outcome.steps.find((result) => result.name === stepName);
  const answer: StepTestAnswer = {
    status: outcome.status === 'SUCCEEDED' && step?.status === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
    durationMs: step?.durationMs ?? 0,
  };
  if (step?.output !== undefined) answer.output = step.output;
  const error = step?.error ?? outcome.error;
  if (error !== undefined) answer.error = error;
  if (step?.logs !== undefined) answer.logs = step.logs;
  return answer;
}
