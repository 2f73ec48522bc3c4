import type { AddressInfo } from 'node:net';
import fastifyRateLimit from '@fastify/rate-limit';
import { type Logger, waitAtMost } from '@flowbox/node-kit';
import { startTracing } from '@flowbox/tracing';
import { createConnections } from './connections/connections.ts';
import { SigningSecrets } from './connections/signing-secrets.ts';
import { migrate } from './db/migrate.ts';
import { createPool } from './db/pool.ts';
import { RefusedDeliveries } from './deliveries/refused-deliveries.ts';
import { createRefusedDeliveriesRepository } from './deliveries/refused-deliveries-repository.ts';
import type { AppConfig } from './env.ts';
import type { FlowboxApp } from './flowbox-app.ts';
import { FlowPublisher } from './flows/flow-publisher.ts';
import { createFlowsRepository } from './flows/flows-repository.ts';
import { withPublishedFlowCache } from './flows/published-flow-cache.ts';
import { seedBenchmarkFlow } from './flows/seed.ts';
import { registerWebhookAdmission, WebhookAdmission } from './http/admission.ts';
import { requireApiKey } from './http/api-key.ts';
import { ApiKeyFailures } from './http/api-key-failures.ts';
import { trackConnections } from './http/connection-drain.ts';
import { registerConnectionRoutes } from './http/connection-routes.ts';
import { createEngineCallbacks } from './http/engine-callbacks.ts';
import { registerEngineRoutes } from './http/engine-routes.ts';
import { registerFlowRoutes } from './http/flow-routes.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { createHttpServer } from './http/http-server.ts';
import { registerInspector } from './http/inspector-routes.ts';
import { registerManualRunRoutes } from './http/manual-run-routes.ts';
import { registerMetricsRoute } from './http/metrics-route.ts';
import { registerOpenApi } from './http/openapi.ts';
import { API_VERSION } from './http/openapi-document.ts';
import { registerPieceRoutes } from './http/piece-routes.ts';
import { registerPollRoutes } from './http/poll-routes.ts';
import { parseAllowedResponseHeaders } from './http/response-header-policy.ts';
import { registerRunRoutes } from './http/run-routes.ts';
import { registerScheduleRoutes } from './http/schedule-routes.ts';
import { registerStepTestRoutes } from './http/step-test-routes.ts';
import { registerWaitRoutes } from './http/wait-routes.ts';
import { registerWebhookRoutes, type WebhookDeps } from './http/webhook-routes.ts';
import { AppMetrics } from './metrics/app-metrics.ts';
import { builtInPieceNames, publishBuiltInPieces } from './pieces/built-in-pieces.ts';
import { type LoadCheckIsolation, loadCheckIsolation } from './pieces/piece-load-sandbox.ts';
import { PieceRegistry } from './pieces/piece-registry.ts';
import { createPiecesRepository } from './pieces/pieces-repository.ts';
import { PublishGate } from './pieces/publish-gate.ts';
import { PollJobs } from './polls/poll-jobs.ts';
import { PollResults } from './polls/poll-results.ts';
import { PollTicker } from './polls/poll-ticker.ts';
import { createPollsRepository } from './polls/polls-repository.ts';
import { Dispatcher, ENGINE_TOKEN_GRACE_SECONDS } from './queue/dispatcher.ts';
import { waitUrlSecret } from './queue/durable-dispatch.ts';
import { JobBroker } from './queue/job-broker.ts';
import { runQueueNames } from './queue/queue-shards.ts';
import { RunHandoff } from './queue/run-handoff.ts';
import { RunQueue } from './queue/run-queue.ts';
import { AppRedis } from './redis/app-redis.ts';
import { createRunSearch } from './run-search/run-search.ts';
import { EndedRuns } from './runs/ended-runs.ts';
import { RunLifecycle } from './runs/run-lifecycle.ts';
import { RunProgressStore } from './runs/run-progress-store.ts';
import { RunReconciler } from './runs/run-reconciler.ts';
import { RunResumer } from './runs/run-resumer.ts';
import { RunRetention } from './runs/run-retention.ts';
import { RunSweeper } from './runs/run-sweeper.ts';
import { readResumeState } from './runs/run-waits.ts';
import { createRunsRepository } from './runs/runs-repository.ts';
import { ScheduleTicker } from './schedules/schedule-ticker.ts';
import { createSchedulesRepository } from './schedules/schedules-repository.ts';
import { WorkerGateway } from './socket/worker-gateway.ts';
import { StepTests } from './step-tests/step-tests.ts';
import { ObjectStorage } from './storage/object-storage.ts';
import { checkStores, pingRedis } from './store-check.ts';
import { SyncResponseHub } from './sync/sync-response-hub.ts';
import { TokenService } from './tokens.ts';
import { subflowEnded } from './waits/subflow-end.ts';
import { startSubflow } from './waits/subflow-start.ts';
import { createSubflowsRepository } from './waits/subflows-repository.ts';
import { createWaitsRepository } from './waits/waits-repository.ts';

export type { FlowboxApp } from './flowbox-app.ts';

/**
 * Builds one app instance from its config. Building has no
 * side effects: nothing connects, migrates, publishes or listens until a start step says so
 * (`startApp` runs them in order), so tests can build an app and use `http.inject()`.
 */
export async function createApp(config: AppConfig, logger: Logger): Promise<FlowboxApp> {
  // Read first: an await after the stores' clients exist lets them connect, and building the
  // app opens no connection (app-start.test.ts).
  const reservedNames = await builtInPieceNames();
  // Without an endpoint there is no tracer at all: no OpenTelemetry SDK is loaded, and every
  // traced place is one null check. With one, nothing connects until the first export.
  const tracer =
    config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? null
      : await startTracing({
          endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
          serviceName: config.OTEL_SERVICE_NAME,
          resource: { 'service.instance.id': config.INSTANCE_ID },
          logger: logger.child({ component: 'tracing' }),
        });
  let draining = false;
  const http = createHttpServer(config, logger, () => draining);
  const httpConnections = trackConnections(http.server);
  // Before the routes (it documents each as it is added), and before any Redis client exists:
  // the plugins load here, and nothing that could connect may be waiting on the event loop.
  const routes = await registerOpenApi(http, API_VERSION);

  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const flows = withPublishedFlowCache(createFlowsRepository(pool), {
    ttlMs: FLOW_CACHE_TTL_MS,
    maxEntries: config.FLOW_CACHE_MAX_ENTRIES,
    maxBytes: config.FLOW_CACHE_MAX_BYTES,
  });
  const pieces = createPiecesRepository(pool);
  const refusedDeliveries = createRefusedDeliveriesRepository(pool);
  // Refused webhooks are noted in memory and written in one batch a second.
  const refused = new RefusedDeliveries({
    repository: refusedDeliveries,
    keepPerFlow: config.REFUSED_DELIVERIES_PER_FLOW,
    logger: logger.child({ component: 'refused-deliveries' }),
  });
  const runs = createRunsRepository(pool, {
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    bounds: { maxQueued: config.FLOW_MAX_QUEUED_RUNS, maxRunning: config.FLOW_MAX_CONCURRENT_RUNS },
  });
  const redis = new AppRedis(config.REDIS_URL, logger);
  const { producer: producerRedis, outage } = redis;
  const queueNames = runQueueNames(config.QUEUE_SHARDS, redis.cluster);
  const prefix = config.REDIS_PREFIX;
  const tokens = new TokenService(config.TOKEN_SECRET);
  const storage = new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
  const hub = new SyncResponseHub({
    publisher: producerRedis,
    subscriber: redis.subscriber,
    sharded: redis.cluster,
    prefix,
    instanceId: config.INSTANCE_ID,
    logger: logger.child({ component: 'sync-hub' }),
  });
  const queue = new RunQueue({
    connection: producerRedis,
    prefix,
    names: queueNames,
    maxAttempts: config.RUN_MAX_ATTEMPTS,
    logger: logger.child({ component: 'run-queue' }),
  });
  // Bounds the backlog (and Redis memory) without a Redis round trip per webhook.
  const admission = new WebhookAdmission({
    maxQueuedRuns: config.WEBHOOK_MAX_QUEUED_RUNS,
    countQueued: async () => (await queue.waiting()) + broker.heldRuns,
    logger: logger.child({ component: 'admission' }),
  });
  const broker = new JobBroker({
    connection: redis.broker,
    prefix,
    names: queueNames,
    logger: logger.child({ component: 'job-broker' }),
    blockSeconds: Math.min(config.WORKER_POLL_SECONDS, 5),
    isOutage: outage.isOutage,
    heldMax: config.QUEUE_HELD_RUNS_MAX,
    // Held runs go to the queue long before the reconciler would enqueue a copy of them.
    heldMaxMs: (config.RECONCILE_AFTER_SECONDS * 1000) / 4,
    adds: () => queue.adds,
  });
  let isolation: LoadCheckIsolation | undefined;
  const loadCheck = () => {
    isolation ??= loadCheckIsolation(config.PIECE_LOAD_CHECK);
    return isolation;
  };
  const registry = new PieceRegistry({
    pieces,
    storage,
    maxArchiveBytes: config.PIECE_ARCHIVE_MAX_BYTES,
    loadCheck,
    maxUnpackedBytes: config.PIECE_UNPACKED_MAX_BYTES,
    gate: new PublishGate({
      concurrency: config.PIECE_PUBLISH_CONCURRENCY,
      maxQueued: config.PIECE_PUBLISH_MAX_QUEUED,
    }),
    reservedNames,
  });
  const connections = createConnections(pool, config, logger.child({ component: 'connections' }));
  const signingSecrets = new SigningSecrets({ connections });
  const publisher = new FlowPublisher({
    flows,
    storage,
    registry,
    connections,
    scheduleMinIntervalSeconds: config.SCHEDULE_MIN_INTERVAL_SECONDS,
  });
  // Callbacks and job results carry a run's steps, which the engine keeps within the log's limit.
  const messageLimit = config.RUN_LOG_MAX_BYTES + MESSAGE_ENVELOPE_BYTES;
  // Ended runs are remembered as long as their engine tokens live.
  const ended = new EndedRuns({ ttlMs: (config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS) * 1000 });
  const progress = new RunProgressStore({
    redis: producerRedis,
    prefix,
    ttlMs: (config.FLOW_TIMEOUT_SECONDS + ENGINE_TOKEN_GRACE_SECONDS) * 1000,
  });
  // The engine's reports, over HTTP or its worker's socket, are checked and kept the same way.
  const allowedResponseHeaders = parseAllowedResponseHeaders(config.WEBHOOK_RESPONSE_ALLOWED_HEADERS);
  const subflows = createSubflowsRepository(pool);
  const engineCallbacks = createEngineCallbacks({
    ended,
    progress,
    hub,
    tokens,
    tracer,
    allowedResponseHeaders,
    startSubflow: (parentRunId, report) =>
      startSubflow(
        { subflows, flows, lifecycle, queue, maxDepth: config.SUBFLOW_MAX_DEPTH },
        parentRunId,
        report,
      ),
  });
  const metrics = new AppMetrics();
  // Records pauses (a timed one enqueues its resume job, delayed) and resumes paused runs for
  // wait URLs, child runs, the reconciler.
  const resumer = new RunResumer({
    pool,
    queue,
    metrics,
    logger: logger.child({ component: 'run-resumer' }),
  });
  const lifecycle = new RunLifecycle({
    pauses: resumer,
    childEnded: (end) => subflowEnded({ subflows, resumer }, end),
    runs,
    ended,
    progress,
    hub,
    queue,
    maxAttempts: config.RUN_MAX_ATTEMPTS,
    metrics,
    logger: logger.child({ component: 'run-lifecycle' }),
  });
  const stepTests = new StepTests({
    flows,
    publisher,
    queue,
    hub,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
  });
  const dispatcher = new Dispatcher({
    flows,
    pieces,
    lifecycle,
    tokens,
    storage,
    config,
    tracer,
    connections,
    stepTests,
    resumeStates: {
      read: (runId) => readResumeState(pool, runId),
      dispatched: (lateMs) => metrics.resumeDispatched(lateMs),
    },
    publicUrl: () => config.PUBLIC_URL ?? listenUrl,
  });
  const sweeper = new RunSweeper({
    lifecycle,
    logger: logger.child({ component: 'run-sweeper' }),
    flowTimeoutSeconds: config.FLOW_TIMEOUT_SECONDS,
  });
  const reconciler = new RunReconciler({
    pool,
    holder: config.INSTANCE_ID,
    runs,
    lifecycle,
    queue,
    resumer,
    metrics,
    logger: logger.child({ component: 'run-reconciler' }),
    queuedAfterSeconds: config.RECONCILE_AFTER_SECONDS,
    flowTimeoutSeconds: config.FLOW_TIMEOUT_SECONDS,
    redisDown: () => outage.down,
    isOutage: outage.isOutage,
  });
  const retention = new RunRetention({
    pool,
    holder: config.INSTANCE_ID,
    runs,
    refusedDeliveries,
    storage,
    metrics,
    logger: logger.child({ component: 'run-retention' }),
    days: config.RUN_RETENTION_DAYS,
  });
  const handoff = new RunHandoff({
    queue,
    broker,
    direct: config.QUEUE_DIRECT_HANDOFF,
    startOnAccept: config.FLOW_MAX_CONCURRENT_RUNS === 0,
    redisDown: () => outage.down,
    workerLost: (lease) => dispatcher.workerLost(lease),
    hasWorkers: () => (gateway?.connectedWorkers ?? 0) > 0,
  });
  const schedules = createSchedulesRepository(pool, { maxQueued: config.FLOW_MAX_QUEUED_RUNS });
  const ticker = new ScheduleTicker({
    schedules,
    submit: (runs) => handoff.submitMany(runs),
    metrics,
    logger: logger.child({ component: 'schedule-ticker' }),
    refreshMs: SCHEDULE_REFRESH_MS,
    lateLimitMs: config.SCHEDULE_LATE_LIMIT_SECONDS * 1000,
  });
  const polls = createPollsRepository(pool, { maxQueued: config.FLOW_MAX_QUEUED_RUNS });
  const pollJobs = new PollJobs();
  const pollTicker = new PollTicker({
    polls,
    jobs: pollJobs,
    dispatch: (poll) => dispatcher.dispatchPoll(poll),
    metrics,
    logger: logger.child({ component: 'poll-ticker' }),
    refreshMs: SCHEDULE_REFRESH_MS,
    pollTimeoutMs: config.FLOW_TIMEOUT_SECONDS * 1000,
    waitMs: POLL_WAIT_MS,
    hasWorkers: () => (gateway?.connectedWorkers ?? 0) > 0,
  });
  const pollResults = new PollResults({
    polls,
    submit: (job, rank) => handoff.submit(job, rank),
    metrics,
    logger: logger.child({ component: 'poll-results' }),
    maxItems: config.POLL_MAX_ITEMS,
  });
  let gateway: WorkerGateway | null = null;
  // Where the app listens, once it does: the base of wait URLs when PUBLIC_URL is unset.
  let listenUrl: string | null = null;

  registerHealthRoutes(http, {
    database: async () => void (await pool.query('SELECT 1')),
    redis: async () => void (await producerRedis.ping()),
    connectedWorkers: () => gateway?.connectedWorkers ?? 0,
    draining: () => draining,
  });
  registerMetricsRoute(http, metrics, {
    token: config.METRICS_TOKEN,
    failures: {
      redis: producerRedis,
      nameSpace: `${config.REDIS_PREFIX}:metrics-token-failures:`,
      settings: {
        maxFailures: config.API_KEY_MAX_FAILURES,
        windowSeconds: config.API_KEY_FAILURE_WINDOW_SECONDS,
      },
      logger: logger.child({ component: 'metrics-token' }),
    },
  });
  registerWebhookAdmission(http, admission);
  const runStarts: WebhookDeps = {
    flows,
    lifecycle,
    handoff,
    hub,
    runs,
    progress,
    idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS,
    webhookTimeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    maxBodyDepth: config.WEBHOOK_MAX_DEPTH,
    tracer,
    signingSecrets,
    metrics,
    allowedResponseHeaders,
    refused,
  };
  registerWebhookRoutes(http, runStarts);
  // The management API sits behind the API key; webhooks, health and the engine callbacks
  // (which carry their own run-scoped tokens) do not.
  void http.register(async (management) => {
    await management.register(fastifyRateLimit, {
      global: false,
      redis: producerRedis,
      nameSpace: `${config.REDIS_PREFIX}:api-key-failures:`,
    });
    const failures = ApiKeyFailures.create(management, {
      metrics,
      logger: logger.child({ component: 'api-key' }),
      settings: {
        maxFailures: config.API_KEY_MAX_FAILURES,
        windowSeconds: config.API_KEY_FAILURE_WINDOW_SECONDS,
      },
    });
    management.addHook('onRequest', requireApiKey(config.API_KEY, failures));
    registerFlowRoutes(management, {
      flows,
      publisher,
      registry,
      scheduleMinIntervalSeconds: config.SCHEDULE_MIN_INTERVAL_SECONDS,
      refusedDeliveries,
      limits: {
        maxDepth: config.FLOW_MAX_DEPTH,
        maxSteps: config.FLOW_MAX_STEPS,
        flowTimeoutMs: config.FLOW_TIMEOUT_SECONDS * 1000,
        pollMinIntervalSeconds: config.POLL_MIN_INTERVAL_SECONDS,
        maxPauseMs: config.RUN_MAX_PAUSE_DAYS * 86_400_000,
      },
    });
    registerPieceRoutes(management, { registry, maxArchiveBytes: config.PIECE_ARCHIVE_MAX_BYTES });
    registerRunRoutes(management, {
      runs,
      progress,
      storage,
      lifecycle,
      queue,
      search: createRunSearch(pool),
      subflows,
    });
    registerManualRunRoutes(management, runStarts);
    registerScheduleRoutes(management, { flows, schedules });
    registerStepTestRoutes(management, { stepTests });
    registerPollRoutes(management, { flows, polls });
    registerConnectionRoutes(management, { connections, signingSecrets });
  });
  registerWaitRoutes(http, {
    waits: createWaitsRepository(pool),
    definition: async (flowVersionId) => (await flows.getVersion(flowVersionId))?.definition ?? null,
    resumer,
    secret: waitUrlSecret(config),
    hub,
    webhookTimeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    maxBodyDepth: config.WEBHOOK_MAX_DEPTH,
  });
  registerEngineRoutes(http, { callbacks: engineCallbacks, bodyLimit: messageLimit });
  registerInspector(http);

  return {
    http,
    routes,
    tokens,
    instanceId: config.INSTANCE_ID,

    async checkStores() {
      await checkStores([
        {
          variable: 'DATABASE_URL',
          url: config.DATABASE_URL,
          reach: async () => void (await pool.query('SELECT 1')),
        },
        { variable: 'REDIS_URL', url: config.REDIS_URL, reach: () => pingRedis(config.REDIS_URL) },
        // Creates the bucket when missing, as publishPieces would next.
        { variable: 'S3_ENDPOINT', url: config.S3_ENDPOINT, reach: () => storage.ensureBucket() },
      ]);
    },

    async migrate() {
      await migrate(pool, logger);
    },

    async checkConnectionKeys() {
      await connections.checkKeys();
    },

    async publishPieces() {
      await storage.ensureBucket();
      const check = loadCheck();
      if (check.mode === 'unavailable') {
        logger.error(
          { reason: check.reason },
          'piece publishes will be refused (503 PIECE_CHECK_UNAVAILABLE): the load check cannot be sandboxed here; set PIECE_LOAD_CHECK=UNSANDBOXED to allow it without',
        );
      } else if (check.mode === 'unsandboxed') {
        logger.warn('PIECE_LOAD_CHECK=UNSANDBOXED: published pieces are loaded outside a sandbox');
      }
      const { published, conflicts } = await publishBuiltInPieces(registry);
      for (const conflict of conflicts) {
        logger.error(
          { piece: conflict.piece, packageDir: conflict.packageDir, err: conflict.message },
          'a built-in piece version is in the registry with other content; the app starts with the registry content',
        );
      }
      logger.info(
        {
          pieces: published.map(({ piece, created }) => ({
            piece: `${piece.name}@${piece.version}`,
            created,
          })),
        },
        'published the built-in pieces',
      );
    },

    async seedBenchmarkFlow() {
      if (await seedBenchmarkFlow(flows, publisher)) logger.info('seeded the benchmark flow');
    },

    async listen() {
      await redis.connect();
      await hub.start();
      await broker.start();
      await admission.start();
      sweeper.start();
      reconciler.start();
      retention.start();
      ticker.start();
      pollTicker.start();
      refused.start();
      gateway = new WorkerGateway({
        httpServer: http.server,
        broker,
        dispatcher,
        tokens,
        logger: logger.child({ component: 'worker-gateway' }),
        pollSeconds: config.WORKER_POLL_SECONDS,
        // Under a cap, a run started ahead would count against its flow's cap while it waits.
        startAhead: config.FLOW_MAX_CONCURRENT_RUNS === 0,
        nextWithResult: config.QUEUE_NEXT_WITH_RESULT,
        maxMessageBytes: messageLimit,
        callbacks: engineCallbacks,
        countCallback: (route, statusCode) => metrics.engineCallback(route, statusCode),
        polls: { jobs: pollJobs, results: pollResults },
      });
      const liveGateway = gateway;
      metrics.attach({
        queueCounts: async () => {
          // Held runs wait too (JobBroker.hold).
          const counts = await queue.counts();
          return { ...counts, waiting: counts.waiting + broker.heldRuns };
        },
        connectedWorkers: () => liveGateway.connectedWorkers,
        busyWorkers: () => liveGateway.busyWorkers,
        waitingWorkers: () => broker.waitingPolls,
        syncCallersWaiting: () => hub.waiting,
        caches: () => ({ published_flows: flows.cacheUsage(), ...dispatcher.cacheUsage() }),
      });
      await http.listen({ host: config.HOST, port: config.PORT });
      const address = http.server.address() as AddressInfo;
      const url = `http://${config.HOST}:${address.port}`;
      listenUrl = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${address.port}`;
      logger.info({ url, instanceId: config.INSTANCE_ID }, 'app listening');
      return url;
    },

    async drain() {
      draining = true;
      logger.info({ drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, 'draining: not ready, still serving');
      await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_SECONDS * 1000));
    },

    async close() {
      draining = true;
      // Order: answer waiting callers, stop handing out work (failing what workers held), then
      // drop connections. The gateway closes the HTTP server with its socket.io server.
      // Steps that talk to Redis are bounded: with Redis down they would wait for a reconnect
      // that may never come, and a shutdown must not hang on it.
      // Seven steps (eight with tracing), each bounded by its share of the grace period so the
      // whole close fits in it whatever hangs, and each timed in the log.
      const boundMs = (config.SHUTDOWN_GRACE_SECONDS * 1000) / (tracer === null ? 7 : 8);
      const step = async (name: string, work: Promise<unknown>) => {
        const started = performance.now();
        await waitAtMost(boundMs, work);
        logger.debug({ step: name, ms: Math.round(performance.now() - started) }, 'closing');
      };
      await step(
        'sweeper and reconciler',
        Promise.all([
          sweeper.close(),
          reconciler.close(),
          retention.close(),
          ticker.close(),
          pollTicker.close(),
        ]),
      );
      admission.close();
      // Callers still waiting get their runs' real answers while the workers report; those
      // left when the step's bound ends are answered 503 APP_SHUTTING_DOWN with their run id.
      await step('sync callers', hub.idle());
      await step('sync hub', hub.close());
      // Keep-alive callers: each open connection answers its next request (`connection: close`,
      // so it is that socket's last) before it closes; no new connection is accepted.
      await step('http connections', httpConnections.close(boundMs * 0.9));
      // Fails or re-queues the jobs its workers held; then the HTTP server closes with socket.io.
      // Then the runs held for them go to the queue, before it closes.
      await step(
        'worker gateway',
        (gateway?.close() ?? Promise.resolve()).then(() => broker.releaseHeld()),
      );
      // The refusals noted until the server closed are written before the pool ends.
      await step(
        'http, broker and queue',
        Promise.all([http.close().then(() => refused.close()), broker.close(), queue.close()]),
      );
      redis.disconnect();
      storage.close();
      await step('database pool', pool.end());
      // Last: the spans of everything above (runs finalised as their workers left) go out too.
      if (tracer !== null) await step('tracing', tracer.close());
    },
  };
}

/**
 * The start steps in order: check the stores, migrate, publish the pieces, seed the benchmark flow when the config
 * asks for it, listen. Resolves with the base URL.
 */
export async function startApp(app: FlowboxApp, options: { seedBenchmarkFlow: boolean }): Promise<string> {
  await app.checkStores();
  await app.migrate();
  await app.checkConnectionKeys();
  await app.publishPieces();
  if (options.seedBenchmarkFlow) await app.seedBenchmarkFlow();
  return app.listen();
}

/** A schedule published or changed on another app starts ticking here within this. */
const SCHEDULE_REFRESH_MS = 2_000;
/** How long a poll this app took may wait for one of its idle workers; past it, a later tick polls. */
const POLL_WAIT_MS = 60_000;
/** What a callback or job result adds around the steps it carries. */
const MESSAGE_ENVELOPE_BYTES = 256 * 1024;
/** A flow changed on another app instance takes effect here within this (docs/guarantees.md). */
const FLOW_CACHE_TTL_MS = 1_000;
