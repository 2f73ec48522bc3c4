// Generated from docs/openapi.json by `pnpm --filter @flowbox/cli gen:api`: do not edit.
// api-types.test.ts regenerates it and fails when it is stale.

export interface paths {
    "/health/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process answers. */
        get: operations["getLive"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Postgres and Redis answer; with the number of connected workers. */
        get: operations["getReady"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (text format 0.0.4).
         * @description Behind `authorization: Bearer <METRICS_TOKEN>` when that is set; open otherwise.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/connections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every connection: names, dates and the flows using each, never values. */
        get: operations["listConnections"];
        put?: never;
        /** Keeps a secret, encrypted, for the runs of flows that reference it as {{connections.<name>}}. */
        post: operations["createConnection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/connections/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One connection, without its value. */
        get: operations["getConnection"];
        /** Replaces a connection's value (a rotation): runs dispatched from now on get the new one. */
        put: operations["updateConnection"];
        post?: never;
        /**
         * Deletes a connection no published flow version references.
         * @description Answers 409 naming the published versions that reference it. A run of an older version that references it then fails CONNECTION_MISSING.
         */
        delete: operations["deleteConnection"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every flow. */
        get: operations["listFlows"];
        put?: never;
        /** Creates a flow with its version 1, published when asked. */
        post: operations["createFlow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One flow. */
        get: operations["getFlow"];
        put?: never;
        post?: never;
        /**
         * Deletes a flow: its webhooks answer 404 at once on every app.
         * @description Its runs stay readable until retention (RUN_RETENTION_DAYS) takes them, and its versions stay for them. The id stays taken.
         */
        delete: operations["deleteFlow"];
        options?: never;
        head?: never;
        /** Renames, enables or disables a flow (a disabled flow answers its webhooks 404). */
        patch: operations["updateFlow"];
        trace?: never;
    };
    "/v1/flows/{flowId}/deliveries/refused": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The flow's webhooks refused before any run existed, newest first.
         * @description A bad signature, a body too large or not parsable, a full queue, the flow disabled or unpublished: the last REFUSED_DELIVERIES_PER_FLOW of them, kept RUN_RETENTION_DAYS, with their headers without credentials. Written once a second, so a refusal appears within about a second.
         */
        get: operations["listRefusedDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Starts a run of the flow's published version with this payload, and answers at once with its id.
         * @description Any published flow, whatever its trigger (a schedule's too), enabled or not. The run's `source` is `manual`. An `Idempotency-Key` header is not read here (it is the webhooks'): each call starts a run.
         */
        post: operations["startFlowRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}/runs/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Runs the flow's published version with this payload and answers as its sync webhook does.
         * @description Any published flow, whatever its trigger (a schedule's too), enabled or not. The run's `source` is `manual`. An `Idempotency-Key` header is not read here (it is the webhooks'): each call starts a run. The answer is the flow's response step's; for a failed run the flow's `errorResponse` when it has one, else the run's error with its id; 204 when the run succeeded and no step answered; 504 past WEBHOOK_TIMEOUT_SECONDS (the run goes on).
         */
        post: operations["startFlowRunSync"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}/schedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A schedule flow's next ticks and the latest ticks it skipped or missed.
         * @description 404 FLOW_NOT_FOUND for a flow that does not exist or whose published version's trigger is not a schedule.
         */
        get: operations["getFlowSchedule"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A flow's versions. */
        get: operations["listFlowVersions"];
        put?: never;
        /** Adds a version to a flow, published when asked. */
        post: operations["addFlowVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/flows/{flowId}/versions/{versionId}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publishes a version: builds its bundle and makes it the flow's live version. */
        post: operations["publishFlowVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This OpenAPI 3.1 document (the same as docs/openapi.json); Swagger UI on it at /v1/docs. */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pieces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every published piece: its versions and the latest. */
        get: operations["listPieces"];
        put?: never;
        /**
         * Publishes a built piece as name@version.
         * @description The manifest and archive as the piece's build wrote them. The names of the built-in pieces (`webhook`, `http`, `math-helper`, every package the app ships) and every name starting `flowbox-` are reserved: 403 PIECE_NAME_RESERVED. Checked before anything is stored: the manifest, the archive, unpacked with the reader and rules a worker uses (size packed and unpacked, gzip, a tar of regular files and directories with relative paths, the entry), and the module, loaded in a child process with no environment, no network and a deadline (one that throws, exits, hangs or uses top-level await is refused). 201 when new; 200 when the same name@version with the same archive is there; 409 when it is there with another. Versions are immutable. A few publishes are checked at once (PIECE_PUBLISH_CONCURRENCY) and a few wait; past them 503 PIECE_PUBLISH_BUSY.
         */
        post: operations["publishPiece"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pieces/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One piece's versions: sha256, size, publish time, actions with their input schemas (JSON Schema) and whether it can run in an isolate. */
        get: operations["getPiece"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pieces/{name}/{version}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Yanks a piece version: nothing new pins it, flows pinned to it keep running it.
         * @description The version stays in the registry (its archive too): published flow versions that pin it keep running it, but no flow version published from now on can pin it, and a flow that names no version gets the latest one not yanked. A version the published version of a flow pins is refused 409 PIECE_IN_USE naming those flows, unless `?force=true`. Yanking a yanked version answers it unchanged. Yanks are final: publish a new version to replace one.
         */
        delete: operations["yankPiece"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Runs without their steps, one page at a time.
         * @description Pass `nextCursor` back as `cursor`; filtered by flow, status and start; oldest first unless `order=newest`.
         */
        get: operations["listRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{runId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One run: status, steps, error, latency anatomy and a presigned link to its log. */
        get: operations["getRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/{runId}/rerun": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Starts a new run of the run's flow with the same trigger request.
         * @description Asynchronously, on the run's own flow version, or the flow's published one with `{"version": "latest"}`; the new run's `rerunOf` names this one. 404 when the run, or for `latest` its flow, is gone; 410 when the request is gone (retention deleted the run, or it predates kept requests).
         */
        post: operations["rerunRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/runs/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Throughput and latency percentiles of the runs accepted in the last `windowSeconds`.
         * @description Per `bucketSeconds` and in total, from Postgres (every app instance).
         */
        get: operations["getRunStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{flowId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Accepts a run of the query string (no body) and answers at once with its id.
         * @description The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, `body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; `{{trigger.x}}` is the body's `x`.
         */
        get: operations["triggerWebhookGet"];
        put?: never;
        /**
         * Accepts a run and answers at once with its id; read it with GET /v1/runs/{runId}.
         * @description The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, `body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; `{{trigger.x}}` is the body's `x`.
         */
        post: operations["triggerWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{flowId}/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Runs the flow with the query string (no body) and answers with its response step's answer.
         * @description The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, `body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; `{{trigger.x}}` is the body's `x`.
         */
        get: operations["triggerWebhookSyncGet"];
        put?: never;
        /**
         * Runs the flow and answers with its response step's status, headers and body.
         * @description The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, `body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; `{{trigger.x}}` is the body's `x`.
         */
        post: operations["triggerWebhookSync"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        __schema0: unknown;
        AddVersionRequest: {
            definition: components["schemas"]["FlowDefinitionInput"];
            /** @default false */
            publish: boolean;
        };
        /** @description A secret kept encrypted; its value is never shown. */
        Connection: {
            /** Format: date-time */
            createdAt: string;
            name: string;
            /** Format: date-time */
            updatedAt: string;
            /** @description The flows whose published version references this connection, with that version's id. */
            usedBy: {
                flowId: string;
                flowVersionId: string;
            }[];
        };
        ConnectionList: {
            connections: components["schemas"]["Connection"][];
        };
        CreateConnectionRequest: {
            name: string;
            /** @description A string, or a JSON object of at most 8 KiB as JSON; `{{connections.<name>.<field>}}` reads a field of an object. */
            value: string | {
                [key: string]: components["schemas"]["__schema0"];
            };
        };
        CreatedFlow: {
            flow: components["schemas"]["Flow"];
            version: components["schemas"]["FlowVersion"];
            /** @description What the definition runs with but its author should know, e.g. that no step answers a sync caller (its sync webhook then answers 204 when the run succeeds). Empty when nothing. */
            warnings: string[];
        };
        CreateFlowRequest: {
            definition: components["schemas"]["FlowDefinitionInput"];
            id?: string;
            name: string;
            /**
             * @description Publish version 1 right away.
             * @default false
             */
            publish: boolean;
        };
        /** @description An error: its code decides the HTTP status. */
        Error: {
            error: {
                /**
                 * @description One of ERROR_CATALOG (packages/protocol/src/errors.ts).
                 * @enum {string}
                 */
                code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                message: string;
            };
            /**
             * Format: uuid
             * @description The run the error is about, when a run was created.
             */
            runId?: string;
        };
        /** @description A flow: its webhooks run its published version. */
        Flow: {
            /** Format: date-time */
            createdAt: string;
            /** @description A disabled flow answers its webhooks 404. */
            enabled: boolean;
            id: string;
            name: string;
            publishedVersionId: string | null;
            /** @description The published version's trigger (`webhook` or `schedule`, with its input); null before a version is published. */
            trigger: {
                input: {
                    [key: string]: unknown;
                };
                piece: string;
                trigger: string;
            } | null;
            /** Format: date-time */
            updatedAt: string;
        };
        FlowDefinition: {
            errorResponse?: {
                body?: unknown;
                headers?: {
                    [key: string]: string;
                };
                /** @default 500 */
                status: number;
            };
            onFailure?: string;
            runWhenCallerGone?: boolean;
            steps: components["schemas"]["FlowStep"][];
            trigger: {
                /** @default {} */
                input: {
                    [key: string]: unknown;
                };
                /** @constant */
                name: "trigger";
                piece: string;
                trigger: string;
                verify?: {
                    /**
                     * @default hex
                     * @enum {string}
                     */
                    encoding: "hex" | "base64";
                    header: string;
                    prefix?: string;
                    /** @constant */
                    scheme: "hmac-sha256";
                    secret: string;
                } | {
                    /** @default stripe-signature */
                    header: string;
                    /** @constant */
                    scheme: "stripe";
                    secret: string;
                    /** @default 300 */
                    toleranceSeconds: number;
                };
                version?: string;
            };
        };
        FlowDefinitionInput: {
            errorResponse?: {
                body?: unknown;
                headers?: {
                    [key: string]: string;
                };
                /** @default 500 */
                status: number;
            };
            onFailure?: string;
            runWhenCallerGone?: boolean;
            steps: components["schemas"]["FlowStepInput"][];
            trigger: {
                /** @default {} */
                input: {
                    [key: string]: unknown;
                };
                /** @constant */
                name: "trigger";
                piece: string;
                trigger: string;
                verify?: {
                    /**
                     * @default hex
                     * @enum {string}
                     */
                    encoding: "hex" | "base64";
                    header: string;
                    prefix?: string;
                    /** @constant */
                    scheme: "hmac-sha256";
                    secret: string;
                } | {
                    /** @default stripe-signature */
                    header: string;
                    /** @constant */
                    scheme: "stripe";
                    secret: string;
                    /** @default 300 */
                    toleranceSeconds: number;
                };
                version?: string;
            };
        };
        FlowList: {
            flows: components["schemas"]["Flow"][];
        };
        /** @description A schedule flow's coming ticks and the latest it skipped or missed. */
        FlowSchedule: {
            /** @enum {string} */
            catchUp: "none" | "last";
            flowId: string;
            /** @description The next ticks from now, as the cron library computes them. */
            nextTicks: string[];
            /** @enum {string} */
            overlap: "allow" | "skip";
            /** @description The latest ticks that started no run, newest first. */
            passedTicks: {
                /** @description Ticks passed over before this one (after an outage). */
                missed: number;
                /** @enum {string} */
                outcome: "skipped" | "missed";
                /** @description `overlap`, `queue-full` or `catch-up-none`. */
                reason: string | null;
                /** Format: date-time */
                scheduledAt: string;
            }[];
            /** @enum {string} */
            trigger: "cron" | "every";
        };
        /** @description A step of a flow: piece, code, router, loop, stop, delay, wait or flow. */
        FlowStep: unknown;
        /** @description A step of a flow: piece, code, router, loop, stop, delay, wait or flow. */
        FlowStepInput: unknown;
        /** @description One version of a flow's definition. */
        FlowVersion: {
            /** @description The built bundle, once the version was published. */
            bundle: {
                pieces: {
                    name: string;
                    version: string;
                }[];
                sha256: string;
                sizeBytes: number;
            } | null;
            /** Format: date-time */
            createdAt: string;
            definition: components["schemas"]["FlowDefinition"];
            flowId: string;
            id: string;
            number: number;
            published: boolean;
            publishedAt: string | null;
        };
        FlowVersionEnvelope: {
            version: components["schemas"]["FlowVersion"];
            /** @description What the definition runs with but its author should know, e.g. that no step answers a sync caller (its sync webhook then answers 204 when the run succeeds). Empty when nothing. */
            warnings: string[];
        };
        FlowVersionList: {
            versions: components["schemas"]["FlowVersion"][];
        };
        Live: {
            /** @constant */
            status: "ok";
        };
        /** @description The trigger's body: templates read it as `{{trigger.x}}`. A schedule flow's trigger outputs it with `scheduledAt` and `firedAt` (the payload's, to replay a tick, else the moment the run started). */
        ManualRunPayload: {
            [key: string]: unknown;
        };
        /** @description An OpenAPI 3.1 document (docs/openapi.json). */
        OpenApiDocument: {
            info: {
                [key: string]: unknown;
            };
            openapi: string;
        } & {
            [key: string]: unknown;
        };
        PieceAction: {
            auth?: {
                description?: string;
                displayName: string;
                required: boolean;
                schema: {
                    [key: string]: unknown;
                };
                /** @enum {string} */
                type: "SECRET_TEXT" | "BASIC_AUTH" | "CUSTOM_AUTH";
            };
            description: string;
            /** @description The action's input as JSON Schema, from its zod schema. */
            inputSchema: {
                [key: string]: unknown;
            };
            name: string;
        };
        PieceDetail: {
            /** @description The highest version not yanked; empty when every one is. */
            latest: string;
            name: string;
            versions: components["schemas"]["PieceVersion"][];
        };
        PieceList: {
            pieces: components["schemas"]["PieceSummary"][];
        };
        PieceSummary: {
            /** @description The highest version not yanked (semver; releases before pre-releases); empty when every one is. */
            latest: string;
            name: string;
            /** @description Every published version, yanked ones included. */
            versions: string[];
        };
        /** @description One immutable published version of a piece. */
        PieceVersion: {
            actions: components["schemas"]["PieceAction"][];
            /** @description Whether the piece can run in a V8 isolate (RUN_ISOLATION=isolate): not when it imports Node built-ins. */
            isolate: {
                /** @description Why not, e.g. `imports node:fs, node:net`. */
                reason?: string;
                supported: boolean;
            };
            name: string;
            /** @description Node built-ins the piece's module imports; null for a version published before they were recorded. */
            nodeBuiltins: string[] | null;
            /** Format: date-time */
            publishedAt: string;
            /** @description The archive's sha256: S3 key and the worker's check. */
            sha256: string;
            sizeBytes: number;
            triggers: string[];
            version: string;
            /** @description When the version was yanked (`DELETE /v1/pieces/{name}/{version}`): flows pinned to it keep running it, nothing new can pin it. Null while it is not. */
            yankedAt: string | null;
        };
        PublishedPiece: {
            piece: components["schemas"]["PieceVersion"];
        };
        PublishPieceRequest: {
            /**
             * Format: base64
             * @description `dist/piece.tgz`, base64; at most PIECE_ARCHIVE_MAX_BYTES before encoding.
             */
            archive: string;
            /** @description `dist/manifest.json` as the build wrote it. */
            manifest: {
                actions: string[];
                /** @constant */
                entry: "index.mjs";
                name: string;
                triggers: string[];
                version: string;
            };
        };
        /** @description Postgres and Redis answer, and the app is not draining. */
        Ready: {
            /** @enum {string} */
            database: "ok" | "unavailable";
            /** @enum {string} */
            redis: "ok" | "unavailable";
            /** @enum {string} */
            status: "ok" | "unavailable" | "draining";
            /** @description Workers connected to this app over socket.io. */
            workers: number;
        };
        /** @description A webhook refused before any run existed: nothing ran, nothing was queued. */
        RefusedDelivery: {
            /** @description The error code the sender was answered with. */
            code: string;
            /** @description The request's headers without credentials: no authorization, cookie, API key, the flow's signature header, or any header named for a signature, token, secret or session. */
            headers: {
                [key: string]: string;
            };
            httpStatus: number;
            message: string;
            method: string;
            /** Format: date-time */
            receivedAt: string;
            /** @description The connection's peer address (a proxy's, behind one). */
            sourceAddress: string;
            /** @description Further refusals of this flow within the same second, counted here rather than kept. */
            suppressed: number;
            /** @description Sent to the sync webhook. */
            sync: boolean;
        };
        RefusedDeliveryList: {
            /** @description Newest first. */
            deliveries: components["schemas"]["RefusedDelivery"][];
        };
        /** @description The new run, the run it re-runs and the version it runs. */
        RerunAccepted: {
            /** @description The flow version the new run runs. */
            flowVersionId: string;
            /** Format: uuid */
            rerunOf: string;
            /** Format: uuid */
            runId: string;
        };
        RerunRequest: {
            /**
             * @description `run` (the default): the flow version the run ran. `latest`: the flow's published version now.
             * @default run
             * @enum {string}
             */
            version: "run" | "latest";
        };
        /** @description One run: status, steps, error, latency anatomy and a link to its log. */
        Run: {
            attempts: number;
            /** @description For a run of an error flow: the failed run whose flow names it as `onFailure`. */
            causedBy: string | null;
            /** Format: date-time */
            createdAt: string;
            error: {
                /** @enum {string} */
                code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                message: string;
                name: string;
                stack?: string;
                step?: string;
            } | null;
            /** @description Why this failed run's error flow could not start (deleted, unpublished or disabled). */
            errorFlowSkipped: string | null;
            /** @description The run of its flow's error flow (`onFailure`) that this run's failure started. */
            errorRun: string | null;
            finishedAt: string | null;
            flowId: string;
            flowVersionId: string;
            /** Format: uuid */
            id: string;
            /** @description How the worker kept the run apart from others: `isolate` (a V8 isolate of its own in a reused engine), `process` (a fresh engine process, as for a flow whose piece needs Node on an isolate worker), `shared` (a reused engine's realm). Null until a worker reported the run. */
            isolation: ("shared" | "isolate" | "process") | null;
            /** @description Why the run log could not be stored. */
            logError: {
                /** @enum {string} */
                code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                message: string;
                name: string;
                stack?: string;
                step?: string;
            } | null;
            logKey: string | null;
            /** @description A presigned link to the run log, valid for 15 minutes. */
            logUrl: string | null;
            /** @description When the run paused; null unless it is PAUSED. */
            pausedAt: string | null;
            provisioning: {
                /** @enum {string} */
                bundle: "hit" | "miss";
                engine: {
                    jobsServed: number;
                    pid: number;
                    preBooted: boolean;
                };
                pieceHits: number;
                pieceMisses: number;
            } | null;
            /** @description The run this one re-runs (`POST /v1/runs/{runId}/rerun`); it may since be deleted by retention. */
            rerunOf: string | null;
            /** @description The runs that re-run this one, oldest first. */
            reruns: string[];
            /** @description While the run is in flight: the response its flow gave, once given. */
            response?: {
                body: unknown;
                headers: {
                    [key: string]: unknown;
                };
                status: number;
            } | null;
            /** @description How many times the run resumed after a pause. */
            resumes: number;
            /**
             * @description What started the run: its flow's webhook, a schedule tick, a manual run (`POST /v1/flows/{flowId}/runs`), a re-run, or a failed run's error flow (`onFailure`; see `causedBy`).
             * @enum {string}
             */
            source: "webhook" | "schedule" | "manual" | "rerun" | "error_flow";
            startedAt: string | null;
            /** @enum {string} */
            status: "QUEUED" | "RUNNING" | "PAUSED" | "SUCCEEDED" | "FAILED" | "TIMEOUT" | "INTERNAL_ERROR";
            steps: {
                attempts?: {
                    durationMs: number;
                    error: {
                        /** @enum {string} */
                        code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                        message: string;
                        name: string;
                        stack?: string;
                        step?: string;
                    };
                    /** Format: date-time */
                    startedAt: string;
                }[];
                /** @constant */
                continued?: true;
                durationMs: number;
                error?: {
                    /** @enum {string} */
                    code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                    message: string;
                    name: string;
                    stack?: string;
                    step?: string;
                };
                input: unknown;
                kind: string;
                logs?: {
                    /** @enum {string} */
                    level: "debug" | "info" | "log" | "warn" | "error";
                    message: string;
                }[];
                name: string;
                output?: unknown;
                path?: string;
                /** @constant */
                replayed?: true;
                skipReason?: string;
                /** Format: date-time */
                startedAt: string;
                /** @enum {string} */
                status: "SUCCEEDED" | "FAILED" | "SKIPPED" | "WAITING";
                waitingFor?: string;
            }[];
            /** @description Started by the sync webhook (the caller waits for its answer). */
            sync: boolean;
            timings: {
                bootMs: number;
                logPersistMs: number;
                provision?: {
                    bundleMs: number;
                    engineMs: number;
                    piecesMs: number;
                };
                provisionMs: number;
                queueMs: number;
                runMs: number;
                totalMs: number;
                workerBusyMs: number;
            } | null;
            /** @description While the run is PAUSED: where it waits and what resumes it; empty otherwise. */
            waits: components["schemas"]["RunWait"][];
            workerId: string | null;
        };
        /** @description A run accepted: read it with GET /v1/runs/{runId}. */
        RunAccepted: {
            /** Format: uuid */
            runId: string;
        };
        RunPage: {
            /** @description The next page's cursor; null when this page holds the last runs there are now. */
            nextCursor: string | null;
            runs: components["schemas"]["RunSummary"][];
        };
        RunStats: {
            /** @description Every bucket of the window, oldest first, empty ones included. */
            buckets: {
                /** @description FAILED, TIMEOUT or INTERNAL_ERROR. */
                failed: number;
                /** @description Still QUEUED, RUNNING or PAUSED. */
                inFlight: number;
                /** @description Percentile of totalMs of the finished runs; null when none finished. */
                p50Ms: number | null;
                p95Ms: number | null;
                p99Ms: number | null;
                /** Format: date-time */
                start: string;
                succeeded: number;
            }[];
            bucketSeconds: number;
            /**
             * Format: date-time
             * @description The database's clock when the figures were taken.
             */
            now: string;
            /** @description The whole window as one bucket. */
            total: {
                /** @description FAILED, TIMEOUT or INTERNAL_ERROR. */
                failed: number;
                /** @description Still QUEUED, RUNNING or PAUSED. */
                inFlight: number;
                /** @description Percentile of totalMs of the finished runs; null when none finished. */
                p50Ms: number | null;
                p95Ms: number | null;
                p99Ms: number | null;
                succeeded: number;
            };
            windowSeconds: number;
        };
        RunSummary: {
            attempts: number;
            /** Format: date-time */
            createdAt: string;
            error: {
                /** @enum {string} */
                code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                message: string;
                name: string;
                stack?: string;
                step?: string;
            } | null;
            finishedAt: string | null;
            flowId: string;
            flowVersionId: string;
            /** Format: uuid */
            id: string;
            /** @description How the worker kept the run apart from others: `isolate` (a V8 isolate of its own in a reused engine), `process` (a fresh engine process, as for a flow whose piece needs Node on an isolate worker), `shared` (a reused engine's realm). Null until a worker reported the run. */
            isolation: ("shared" | "isolate" | "process") | null;
            /** @description Why the run log could not be stored. */
            logError: {
                /** @enum {string} */
                code: "INVALID_BODY" | "INVALID_REQUEST" | "FLOW_NOT_FOUND" | "FLOW_NOT_WEBHOOK" | "RUN_NOT_FOUND" | "WAIT_ALREADY_RESUMED" | "WAIT_ENDED" | "RERUN_NOT_POSSIBLE" | "RUN_TRIGGER_GONE" | "ROUTE_NOT_FOUND" | "BODY_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNAUTHORIZED" | "FORBIDDEN" | "API_KEY_RATE_LIMITED" | "RUN_ALREADY_FINISHED" | "INVALID_FLOW" | "FLOW_VERSION_NOT_FOUND" | "INVALID_PIECE" | "PIECE_VERSION_EXISTS" | "PIECE_NOT_FOUND" | "PIECE_NAME_RESERVED" | "PIECE_IN_USE" | "FLOW_QUEUE_FULL" | "CALLER_GONE" | "IDEMPOTENCY_KEY_REUSED" | "WEBHOOK_SIGNATURE_INVALID" | "CONNECTION_NOT_FOUND" | "CONNECTION_EXISTS" | "CONNECTION_IN_USE" | "STEP_FAILED" | "CONNECTION_MISSING" | "INVALID_STEP_INPUT" | "TEMPLATE_ERROR" | "CODE_STEP_FAILED" | "CODE_STEP_TIMEOUT" | "CODE_STEP_MEMORY_LIMIT" | "STEP_TIMEOUT" | "FLOW_STOPPED" | "WAIT_TIMEOUT" | "INVALID_DELAY" | "SUBFLOW_TOO_DEEP" | "SUBFLOW_FAILED" | "LOOP_TOO_MANY_ITERATIONS" | "PIECE_NOT_ISOLATABLE" | "ENGINE_MEMORY_LIMIT" | "STEP_OUTPUT_TOO_LARGE" | "EGRESS_DENIED" | "CODE_STEP_EGRESS_DENIED" | "CODE_STEP_FETCH_FAILED" | "INVALID_RESPONSE" | "CODE_STEP_FETCH_LIMIT" | "HTTP_REQUEST_TIMEOUT" | "FLOW_TIMEOUT" | "WEBHOOK_TIMEOUT" | "ENGINE_CRASHED" | "WORKER_LOST" | "RUN_ABANDONED" | "LOG_UPLOAD_FAILED" | "CHECKPOINT_FAILED" | "CALLBACK_FAILED" | "PROVISION_FAILED" | "ARTIFACT_INTEGRITY" | "QUEUE_UNAVAILABLE" | "PIECE_CHECK_UNAVAILABLE" | "APP_SHUTTING_DOWN" | "QUEUE_FULL" | "PIECE_PUBLISH_BUSY" | "INTERNAL";
                message: string;
                name: string;
                stack?: string;
                step?: string;
            } | null;
            logKey: string | null;
            /** @description When the run paused; null unless it is PAUSED. */
            pausedAt: string | null;
            provisioning: {
                /** @enum {string} */
                bundle: "hit" | "miss";
                engine: {
                    jobsServed: number;
                    pid: number;
                    preBooted: boolean;
                };
                pieceHits: number;
                pieceMisses: number;
            } | null;
            /** @description The run this one re-runs (`POST /v1/runs/{runId}/rerun`); it may since be deleted by retention. */
            rerunOf: string | null;
            /** @description How many times the run resumed after a pause. */
            resumes: number;
            /**
             * @description What started the run: its flow's webhook, a schedule tick, a manual run (`POST /v1/flows/{flowId}/runs`), a re-run, or a failed run's error flow (`onFailure`; see `causedBy`).
             * @enum {string}
             */
            source: "webhook" | "schedule" | "manual" | "rerun" | "error_flow";
            startedAt: string | null;
            /** @enum {string} */
            status: "QUEUED" | "RUNNING" | "PAUSED" | "SUCCEEDED" | "FAILED" | "TIMEOUT" | "INTERNAL_ERROR";
            /** @description Started by the sync webhook (the caller waits for its answer). */
            sync: boolean;
            timings: {
                bootMs: number;
                logPersistMs: number;
                provision?: {
                    bundleMs: number;
                    engineMs: number;
                    piecesMs: number;
                };
                provisionMs: number;
                queueMs: number;
                runMs: number;
                totalMs: number;
                workerBusyMs: number;
            } | null;
            workerId: string | null;
        };
        RunWait: {
            /** @description A request (or the child run's end) has arrived for it. */
            answered: boolean;
            /** @description flow: the child run it waits for. */
            childRunId: string | null;
            /** @enum {string} */
            kind: "delay" | "request" | "approval" | "flow" | "retry";
            /** @description The waiting step's path (`each[2]/approval` in a loop's third iteration). */
            path: string;
            /** @description delay, retry: when the run resumes. */
            resumeAt: string | null;
            /** @description request, approval, flow: when the wait times out. */
            timeoutAt: string | null;
        };
        UpdateConnectionRequest: {
            /** @description A string, or a JSON object of at most 8 KiB as JSON; `{{connections.<name>.<field>}}` reads a field of an object. */
            value: string | {
                [key: string]: components["schemas"]["__schema0"];
            };
        };
        /** @description At least one of name and enabled. */
        UpdateFlowRequest: {
            enabled?: boolean;
            name?: string;
        };
        /** @description The version, now yanked. */
        YankedPiece: {
            piece: components["schemas"]["PieceVersion"];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getLive: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": components["schemas"]["Live"];
                };
            };
        };
    };
    getReady: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok",
                     *       "database": "ok",
                     *       "redis": "ok",
                     *       "workers": 2
                     *     }
                     */
                    "application/json": components["schemas"]["Ready"];
                };
            };
            /** @description Not ready (a store is unavailable, or the app is draining). */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Ready"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Metrics. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example # TYPE flowbox_webhook_responses_total counter
                     *     flowbox_webhook_responses_total{status="202"} 41
                     */
                    "text/plain": string;
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong metrics tokens from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED, counted apart from API keys), with `retry-after`; the right token is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listConnections: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The connections. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "connections": [
                     *         {
                     *           "name": "stripe_key",
                     *           "createdAt": "2026-11-25T18:00:00.000Z",
                     *           "updatedAt": "2026-11-25T18:00:00.000Z",
                     *           "usedBy": [
                     *             {
                     *               "flowId": "orders",
                     *               "flowVersionId": "orders-v1"
                     *             }
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["ConnectionList"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createConnection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "stripe_key",
                 *       "value": "sk_live_…"
                 *     }
                 */
                "application/json": components["schemas"]["CreateConnectionRequest"];
            };
        };
        responses: {
            /** @description Created. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "stripe_key",
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "updatedAt": "2026-11-25T18:00:00.000Z",
                     *       "usedBy": []
                     *     }
                     */
                    "application/json": components["schemas"]["Connection"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A conflict: a piece version that exists with another archive, a connection name that is taken (CONNECTION_EXISTS), or a connection published flow versions use (CONNECTION_IN_USE, naming them). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getConnection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The connection. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "stripe_key",
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "updatedAt": "2026-11-25T18:00:00.000Z",
                     *       "usedBy": [
                     *         {
                     *           "flowId": "orders",
                     *           "flowVersionId": "orders-v1"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Connection"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateConnection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "value": "sk_live_…"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateConnectionRequest"];
            };
        };
        responses: {
            /** @description Updated. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "stripe_key",
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "updatedAt": "2026-11-25T18:00:00.000Z",
                     *       "usedBy": [
                     *         {
                     *           "flowId": "orders",
                     *           "flowVersionId": "orders-v1"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Connection"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteConnection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A conflict: a piece version that exists with another archive, a connection name that is taken (CONNECTION_EXISTS), or a connection published flow versions use (CONNECTION_IN_USE, naming them). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "CONNECTION_IN_USE",
                     *         "message": "connection stripe_key is used by published flow versions orders-v1; publish versions without it (or delete those flows) first"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listFlows: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The flows. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "flows": [
                     *         {
                     *           "id": "orders",
                     *           "name": "New orders",
                     *           "enabled": true,
                     *           "publishedVersionId": "orders-v1",
                     *           "trigger": {
                     *             "piece": "webhook",
                     *             "trigger": "catch_webhook",
                     *             "input": {}
                     *           },
                     *           "createdAt": "2026-11-25T18:00:00.000Z",
                     *           "updatedAt": "2026-11-25T18:00:00.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["FlowList"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createFlow: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "orders",
                 *       "name": "New orders",
                 *       "definition": {
                 *         "trigger": {
                 *           "name": "trigger",
                 *           "piece": "webhook",
                 *           "trigger": "catch_webhook",
                 *           "input": {}
                 *         },
                 *         "steps": [
                 *           {
                 *             "type": "piece",
                 *             "name": "step_1",
                 *             "piece": "math-helper",
                 *             "action": "addition_math",
                 *             "input": {
                 *               "a": 2,
                 *               "b": 3
                 *             }
                 *           },
                 *           {
                 *             "type": "code",
                 *             "name": "step_2",
                 *             "code": "return { result: Number(inputs.sum) + 1 };",
                 *             "input": {
                 *               "sum": "{{step_1.result}}"
                 *             }
                 *           },
                 *           {
                 *             "type": "piece",
                 *             "name": "step_3",
                 *             "piece": "webhook",
                 *             "action": "return_response",
                 *             "input": {
                 *               "status": 200,
                 *               "headers": {},
                 *               "body": "{{step_2}}"
                 *             }
                 *           }
                 *         ]
                 *       },
                 *       "publish": true
                 *     }
                 */
                "application/json": components["schemas"]["CreateFlowRequest"];
            };
        };
        responses: {
            /** @description Created. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "flow": {
                     *         "id": "orders",
                     *         "name": "New orders",
                     *         "enabled": true,
                     *         "publishedVersionId": "orders-v1",
                     *         "trigger": {
                     *           "piece": "webhook",
                     *           "trigger": "catch_webhook",
                     *           "input": {}
                     *         },
                     *         "createdAt": "2026-11-25T18:00:00.000Z",
                     *         "updatedAt": "2026-11-25T18:00:00.000Z"
                     *       },
                     *       "version": {
                     *         "id": "orders-v1",
                     *         "flowId": "orders",
                     *         "number": 1,
                     *         "definition": {
                     *           "trigger": {
                     *             "name": "trigger",
                     *             "piece": "webhook",
                     *             "trigger": "catch_webhook",
                     *             "input": {}
                     *           },
                     *           "steps": [
                     *             {
                     *               "type": "piece",
                     *               "name": "step_1",
                     *               "piece": "math-helper",
                     *               "action": "addition_math",
                     *               "input": {
                     *                 "a": 2,
                     *                 "b": 3
                     *               }
                     *             },
                     *             {
                     *               "type": "code",
                     *               "name": "step_2",
                     *               "code": "return { result: Number(inputs.sum) + 1 };",
                     *               "input": {
                     *                 "sum": "{{step_1.result}}"
                     *               }
                     *             },
                     *             {
                     *               "type": "piece",
                     *               "name": "step_3",
                     *               "piece": "webhook",
                     *               "action": "return_response",
                     *               "input": {
                     *                 "status": 200,
                     *                 "headers": {},
                     *                 "body": "{{step_2}}"
                     *               }
                     *             }
                     *           ]
                     *         },
                     *         "published": true,
                     *         "bundle": {
                     *           "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                     *           "sizeBytes": 2048,
                     *           "pieces": []
                     *         },
                     *         "createdAt": "2026-11-25T18:00:00.000Z",
                     *         "publishedAt": "2026-11-25T18:00:00.000Z"
                     *       },
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["CreatedFlow"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getFlow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The flow. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "orders",
                     *       "name": "New orders",
                     *       "enabled": true,
                     *       "publishedVersionId": "orders-v1",
                     *       "trigger": {
                     *         "piece": "webhook",
                     *         "trigger": "catch_webhook",
                     *         "input": {}
                     *       },
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "updatedAt": "2026-11-25T18:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Flow"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteFlow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "FLOW_NOT_FOUND",
                     *         "message": "flow orders not found"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateFlow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "enabled": false
                 *     }
                 */
                "application/json": components["schemas"]["UpdateFlowRequest"];
            };
        };
        responses: {
            /** @description The flow as changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "orders",
                     *       "name": "New orders",
                     *       "enabled": false,
                     *       "publishedVersionId": "orders-v1",
                     *       "trigger": {
                     *         "piece": "webhook",
                     *         "trigger": "catch_webhook",
                     *         "input": {}
                     *       },
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "updatedAt": "2026-11-25T18:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Flow"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listRefusedDeliveries: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The refusals. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deliveries": [
                     *         {
                     *           "receivedAt": "2026-11-25T10:00:00.000Z",
                     *           "code": "WEBHOOK_SIGNATURE_INVALID",
                     *           "message": "the webhook's signature was refused: the x-hub-signature-256 signature does not match the body",
                     *           "httpStatus": 401,
                     *           "method": "POST",
                     *           "sync": false,
                     *           "sourceAddress": "192.0.2.10",
                     *           "headers": {
                     *             "content-type": "application/json",
                     *             "x-github-event": "push"
                     *           },
                     *           "suppressed": 0
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["RefusedDeliveryList"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startFlowRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "orderId": "A-1001"
                 *     }
                 */
                "application/json": components["schemas"]["ManualRunPayload"];
            };
        };
        responses: {
            /** @description Accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runId": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90"
                     *     }
                     */
                    "application/json": components["schemas"]["RunAccepted"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startFlowRunSync: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "orderId": "A-1001"
                 *     }
                 */
                "application/json": components["schemas"]["ManualRunPayload"];
            };
        };
        responses: {
            /** @description The flow's own response (its status, headers and body), or its `errorResponse` for a failed run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The run succeeded but no step answered: no body; `x-flowbox-run-id` names the run. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "FLOW_NOT_FOUND",
                     *         "message": "flow orders does not exist or has no published version"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description An internal error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's run failed before it answered. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No answer within WEBHOOK_TIMEOUT_SECONDS. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getFlowSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Its ticks. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "flowId": "nightly",
                     *       "trigger": "cron",
                     *       "catchUp": "none",
                     *       "overlap": "skip",
                     *       "nextTicks": [
                     *         "2026-11-26T08:00:00.000Z",
                     *         "2026-11-27T08:00:00.000Z"
                     *       ],
                     *       "passedTicks": [
                     *         {
                     *           "scheduledAt": "2026-11-25T08:00:00.000Z",
                     *           "outcome": "skipped",
                     *           "reason": "overlap",
                     *           "missed": 0
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["FlowSchedule"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listFlowVersions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The versions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "versions": [
                     *         {
                     *           "id": "orders-v1",
                     *           "flowId": "orders",
                     *           "number": 1,
                     *           "definition": {
                     *             "trigger": {
                     *               "name": "trigger",
                     *               "piece": "webhook",
                     *               "trigger": "catch_webhook",
                     *               "input": {}
                     *             },
                     *             "steps": [
                     *               {
                     *                 "type": "piece",
                     *                 "name": "step_1",
                     *                 "piece": "math-helper",
                     *                 "action": "addition_math",
                     *                 "input": {
                     *                   "a": 2,
                     *                   "b": 3
                     *                 }
                     *               },
                     *               {
                     *                 "type": "code",
                     *                 "name": "step_2",
                     *                 "code": "return { result: Number(inputs.sum) + 1 };",
                     *                 "input": {
                     *                   "sum": "{{step_1.result}}"
                     *                 }
                     *               },
                     *               {
                     *                 "type": "piece",
                     *                 "name": "step_3",
                     *                 "piece": "webhook",
                     *                 "action": "return_response",
                     *                 "input": {
                     *                   "status": 200,
                     *                   "headers": {},
                     *                   "body": "{{step_2}}"
                     *                 }
                     *               }
                     *             ]
                     *           },
                     *           "published": true,
                     *           "bundle": {
                     *             "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                     *             "sizeBytes": 2048,
                     *             "pieces": []
                     *           },
                     *           "createdAt": "2026-11-25T18:00:00.000Z",
                     *           "publishedAt": "2026-11-25T18:00:00.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["FlowVersionList"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    addFlowVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "definition": {
                 *         "trigger": {
                 *           "name": "trigger",
                 *           "piece": "webhook",
                 *           "trigger": "catch_webhook",
                 *           "input": {}
                 *         },
                 *         "steps": [
                 *           {
                 *             "type": "piece",
                 *             "name": "step_1",
                 *             "piece": "math-helper",
                 *             "action": "addition_math",
                 *             "input": {
                 *               "a": 2,
                 *               "b": 3
                 *             }
                 *           },
                 *           {
                 *             "type": "code",
                 *             "name": "step_2",
                 *             "code": "return { result: Number(inputs.sum) + 1 };",
                 *             "input": {
                 *               "sum": "{{step_1.result}}"
                 *             }
                 *           },
                 *           {
                 *             "type": "piece",
                 *             "name": "step_3",
                 *             "piece": "webhook",
                 *             "action": "return_response",
                 *             "input": {
                 *               "status": 200,
                 *               "headers": {},
                 *               "body": "{{step_2}}"
                 *             }
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["AddVersionRequest"];
            };
        };
        responses: {
            /** @description Created. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "version": {
                     *         "id": "orders-v2",
                     *         "flowId": "orders",
                     *         "number": 2,
                     *         "definition": {
                     *           "trigger": {
                     *             "name": "trigger",
                     *             "piece": "webhook",
                     *             "trigger": "catch_webhook",
                     *             "input": {}
                     *           },
                     *           "steps": [
                     *             {
                     *               "type": "piece",
                     *               "name": "step_1",
                     *               "piece": "math-helper",
                     *               "action": "addition_math",
                     *               "input": {
                     *                 "a": 2,
                     *                 "b": 3
                     *               }
                     *             },
                     *             {
                     *               "type": "code",
                     *               "name": "step_2",
                     *               "code": "return { result: Number(inputs.sum) + 1 };",
                     *               "input": {
                     *                 "sum": "{{step_1.result}}"
                     *               }
                     *             },
                     *             {
                     *               "type": "piece",
                     *               "name": "step_3",
                     *               "piece": "webhook",
                     *               "action": "return_response",
                     *               "input": {
                     *                 "status": 200,
                     *                 "headers": {},
                     *                 "body": "{{step_2}}"
                     *               }
                     *             }
                     *           ]
                     *         },
                     *         "published": false,
                     *         "bundle": null,
                     *         "createdAt": "2026-11-25T18:00:00.000Z",
                     *         "publishedAt": null
                     *       },
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["FlowVersionEnvelope"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishFlowVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                flowId: string;
                versionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Published. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "version": {
                     *         "id": "orders-v1",
                     *         "flowId": "orders",
                     *         "number": 1,
                     *         "definition": {
                     *           "trigger": {
                     *             "name": "trigger",
                     *             "piece": "webhook",
                     *             "trigger": "catch_webhook",
                     *             "input": {}
                     *           },
                     *           "steps": [
                     *             {
                     *               "type": "piece",
                     *               "name": "step_1",
                     *               "piece": "math-helper",
                     *               "action": "addition_math",
                     *               "input": {
                     *                 "a": 2,
                     *                 "b": 3
                     *               }
                     *             },
                     *             {
                     *               "type": "code",
                     *               "name": "step_2",
                     *               "code": "return { result: Number(inputs.sum) + 1 };",
                     *               "input": {
                     *                 "sum": "{{step_1.result}}"
                     *               }
                     *             },
                     *             {
                     *               "type": "piece",
                     *               "name": "step_3",
                     *               "piece": "webhook",
                     *               "action": "return_response",
                     *               "input": {
                     *                 "status": 200,
                     *                 "headers": {},
                     *                 "body": "{{step_2}}"
                     *               }
                     *             }
                     *           ]
                     *         },
                     *         "published": true,
                     *         "bundle": {
                     *           "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                     *           "sizeBytes": 2048,
                     *           "pieces": []
                     *         },
                     *         "createdAt": "2026-11-25T18:00:00.000Z",
                     *         "publishedAt": "2026-11-25T18:00:00.000Z"
                     *       },
                     *       "warnings": []
                     *     }
                     */
                    "application/json": components["schemas"]["FlowVersionEnvelope"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "openapi": "3.1.0",
                     *       "info": {
                     *         "title": "flowbox",
                     *         "version": "1.0.0"
                     *       },
                     *       "paths": {}
                     *     }
                     */
                    "application/json": components["schemas"]["OpenApiDocument"];
                };
            };
        };
    };
    listPieces: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pieces. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "pieces": [
                     *         {
                     *           "name": "greeter",
                     *           "latest": "1.0.0",
                     *           "versions": [
                     *             "1.0.0"
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["PieceList"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishPiece: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "manifest": {
                 *         "name": "greeter",
                 *         "version": "1.0.0",
                 *         "entry": "index.mjs",
                 *         "actions": [
                 *           "greet"
                 *         ],
                 *         "triggers": []
                 *       },
                 *       "archive": "H4sIAAAAAAAAA+3BAQ0AAADCoPdPbQ8HFAAAAAAAAAAA"
                 *     }
                 */
                "application/json": components["schemas"]["PublishPieceRequest"];
            };
        };
        responses: {
            /** @description Already published with this archive: nothing changed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublishedPiece"];
                };
            };
            /** @description Published. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "piece": {
                     *         "name": "greeter",
                     *         "version": "1.0.0",
                     *         "sha256": "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c",
                     *         "sizeBytes": 562,
                     *         "publishedAt": "2026-11-25T18:00:00.000Z",
                     *         "actions": [
                     *           {
                     *             "name": "greet",
                     *             "description": "Greets someone.",
                     *             "inputSchema": {
                     *               "type": "object",
                     *               "properties": {
                     *                 "who": {
                     *                   "type": "string",
                     *                   "minLength": 1
                     *                 }
                     *               },
                     *               "required": [
                     *                 "who"
                     *               ]
                     *             }
                     *           }
                     *         ],
                     *         "triggers": [],
                     *         "nodeBuiltins": [],
                     *         "isolate": {
                     *           "supported": true
                     *         },
                     *         "yankedAt": null
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["PublishedPiece"];
                };
            };
            /** @description The piece is refused (INVALID_PIECE, naming the problem); nothing is stored. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The name is a built-in piece's or starts `flowbox-` (PIECE_NAME_RESERVED). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description name@version is published with another archive (PIECE_VERSION_EXISTS). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over twice PIECE_ARCHIVE_MAX_BYTES in base64 (BODY_TOO_LARGE). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PIECE_PUBLISH_CONCURRENCY publishes are being checked and PIECE_PUBLISH_MAX_QUEUED wait (PIECE_PUBLISH_BUSY); retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPiece: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The piece. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "greeter",
                     *       "latest": "1.0.0",
                     *       "versions": [
                     *         {
                     *           "name": "greeter",
                     *           "version": "1.0.0",
                     *           "sha256": "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c",
                     *           "sizeBytes": 562,
                     *           "publishedAt": "2026-11-25T18:00:00.000Z",
                     *           "actions": [
                     *             {
                     *               "name": "greet",
                     *               "description": "Greets someone.",
                     *               "inputSchema": {
                     *                 "type": "object",
                     *                 "properties": {
                     *                   "who": {
                     *                     "type": "string",
                     *                     "minLength": 1
                     *                   }
                     *                 },
                     *                 "required": [
                     *                   "who"
                     *                 ]
                     *               }
                     *             }
                     *           ],
                     *           "triggers": [],
                     *           "nodeBuiltins": [],
                     *           "isolate": {
                     *             "supported": true
                     *           },
                     *           "yankedAt": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["PieceDetail"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    yankPiece: {
        parameters: {
            query?: {
                /** @description Yank it even though published flow versions pin it (`?force` or `?force=true`); they keep running it. */
                force?: "true" | "false" | "";
            };
            header?: never;
            path: {
                name: string;
                version: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Yanked (or yanked already). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["YankedPiece"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Published flow versions pin it and `force` is not set (PIECE_IN_USE, naming the flows). */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "PIECE_IN_USE",
                     *         "message": "greeter@1.0.0 is pinned by the published versions of flows orders (fl_1); they would keep running it: yank with ?force=true, or publish those flows with another version first"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listRuns: {
        parameters: {
            query?: {
                /** @description The `nextCursor` of the previous page. */
                cursor?: string;
                flowId?: string;
                limit?: number;
                order?: "oldest" | "newest";
                /** @description Only runs created at or after this moment. */
                since?: string;
                status?: "QUEUED" | "RUNNING" | "PAUSED" | "SUCCEEDED" | "FAILED" | "TIMEOUT" | "INTERNAL_ERROR";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of runs. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runs": [
                     *         {
                     *           "id": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90",
                     *           "flowId": "orders",
                     *           "flowVersionId": "orders-v1",
                     *           "status": "SUCCEEDED",
                     *           "sync": false,
                     *           "error": null,
                     *           "logKey": "runs/orders/0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90.json",
                     *           "logError": null,
                     *           "timings": {
                     *             "queueMs": 3,
                     *             "provisionMs": 1,
                     *             "bootMs": 0,
                     *             "runMs": 12,
                     *             "logPersistMs": 4,
                     *             "workerBusyMs": 18,
                     *             "totalMs": 22
                     *           },
                     *           "provisioning": {
                     *             "bundle": "hit",
                     *             "pieceHits": 2,
                     *             "pieceMisses": 0,
                     *             "engine": {
                     *               "pid": 4242,
                     *               "jobsServed": 7,
                     *               "preBooted": true
                     *             }
                     *           },
                     *           "isolation": "isolate",
                     *           "workerId": "worker-1",
                     *           "attempts": 1,
                     *           "createdAt": "2026-11-25T18:00:00.000Z",
                     *           "startedAt": "2026-11-25T18:00:00.003Z",
                     *           "finishedAt": "2026-11-25T18:00:00.022Z",
                     *           "rerunOf": null,
                     *           "source": "webhook",
                     *           "resumes": 0,
                     *           "pausedAt": null
                     *         }
                     *       ],
                     *       "nextCursor": null
                     *     }
                     */
                    "application/json": components["schemas"]["RunPage"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                runId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90",
                     *       "flowId": "orders",
                     *       "flowVersionId": "orders-v1",
                     *       "status": "SUCCEEDED",
                     *       "sync": false,
                     *       "error": null,
                     *       "logKey": "runs/orders/0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90.json",
                     *       "logError": null,
                     *       "timings": {
                     *         "queueMs": 3,
                     *         "provisionMs": 1,
                     *         "bootMs": 0,
                     *         "runMs": 12,
                     *         "logPersistMs": 4,
                     *         "workerBusyMs": 18,
                     *         "totalMs": 22
                     *       },
                     *       "provisioning": {
                     *         "bundle": "hit",
                     *         "pieceHits": 2,
                     *         "pieceMisses": 0,
                     *         "engine": {
                     *           "pid": 4242,
                     *           "jobsServed": 7,
                     *           "preBooted": true
                     *         }
                     *       },
                     *       "isolation": "isolate",
                     *       "workerId": "worker-1",
                     *       "attempts": 1,
                     *       "createdAt": "2026-11-25T18:00:00.000Z",
                     *       "startedAt": "2026-11-25T18:00:00.003Z",
                     *       "finishedAt": "2026-11-25T18:00:00.022Z",
                     *       "rerunOf": null,
                     *       "source": "webhook",
                     *       "resumes": 0,
                     *       "pausedAt": null,
                     *       "steps": [
                     *         {
                     *           "name": "trigger",
                     *           "kind": "webhook/catch_webhook",
                     *           "status": "SUCCEEDED",
                     *           "input": {
                     *             "a": 1
                     *           },
                     *           "output": {
                     *             "a": 1
                     *           },
                     *           "startedAt": "2026-11-25T18:00:00.004Z",
                     *           "durationMs": 1
                     *         }
                     *       ],
                     *       "reruns": [
                     *         "7d2a9f40-1c3b-4e8d-b6a1-2f9e0c4d5b67"
                     *       ],
                     *       "causedBy": null,
                     *       "errorRun": null,
                     *       "errorFlowSkipped": null,
                     *       "waits": [],
                     *       "logUrl": "http://127.0.0.1:7070/flowbox/runs/orders/0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90.json?X-Amz-Expires=900"
                     *     }
                     */
                    "application/json": components["schemas"]["Run"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rerunRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                runId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RerunRequest"];
            };
        };
        responses: {
            /** @description The new run, accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runId": "7d2a9f40-1c3b-4e8d-b6a1-2f9e0c4d5b67",
                     *       "rerunOf": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90",
                     *       "flowVersionId": "orders-v2"
                     *     }
                     */
                    "application/json": components["schemas"]["RerunAccepted"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The run's trigger request is gone (retention, or it predates kept requests). */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRunStats: {
        parameters: {
            query?: {
                /** @description At most 720 buckets: windowSeconds / bucketSeconds <= 720. */
                bucketSeconds?: number;
                flowId?: string;
                windowSeconds?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Figures per bucket, oldest first, empty buckets included. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "now": "2026-11-25T18:00:10.000Z",
                     *       "windowSeconds": 10,
                     *       "bucketSeconds": 5,
                     *       "buckets": [
                     *         {
                     *           "start": "2026-11-25T18:00:00.000Z",
                     *           "succeeded": 40,
                     *           "failed": 1,
                     *           "inFlight": 0,
                     *           "p50Ms": 21,
                     *           "p95Ms": 35,
                     *           "p99Ms": 48
                     *         },
                     *         {
                     *           "start": "2026-11-25T18:00:05.000Z",
                     *           "succeeded": 0,
                     *           "failed": 0,
                     *           "inFlight": 2,
                     *           "p50Ms": null,
                     *           "p95Ms": null,
                     *           "p99Ms": null
                     *         }
                     *       ],
                     *       "total": {
                     *         "succeeded": 40,
                     *         "failed": 1,
                     *         "inFlight": 2,
                     *         "p50Ms": 21,
                     *         "p95Ms": 35,
                     *         "p99Ms": 48
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["RunStats"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No key or the wrong one (UNAUTHORIZED). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many wrong API keys from this address within API_KEY_FAILURE_WINDOW_SECONDS (API_KEY_RATE_LIMITED), with `retry-after`; the right key is never refused. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    triggerWebhookGet: {
        parameters: {
            query?: {
                /** @description Any parameters; a repeated one reaches the flow as an array of its values. */
                query?: {
                    [key: string]: string | string[];
                };
            };
            header?: {
                /** @description At most one run per flow and key within IDEMPOTENCY_TTL_HOURS: a repeat gets the first request's run (async: the same 202; sync: the same answer, waited for while the run runs). A repeat with another body is 422. A structured-field string (`"abc"`) or a bare token. */
                "Idempotency-Key"?: string;
            };
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runId": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90"
                     *     }
                     */
                    "application/json": components["schemas"]["RunAccepted"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow is signed (trigger.verify) and the request's signature is missing, repeated, stale or wrong (WEBHOOK_SIGNATURE_INVALID); no run was created. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's trigger is a schedule (FLOW_NOT_WEBHOOK): it starts from its ticks or by hand (POST /v1/flows/{flowId}/runs); no run was created. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A flow id longer than 100 characters (fastify maxParamLength). */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The Idempotency-Key was sent before with another body, or to the other of the sync and async webhooks, within IDEMPOTENCY_TTL_HOURS (IDEMPOTENCY_KEY_REUSED, naming the key's run); no run was created. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow has too many queued or running runs (admission). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize). */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    triggerWebhook: {
        parameters: {
            query?: {
                /** @description Any parameters; a repeated one reaches the flow as an array of its values. */
                query?: {
                    [key: string]: string | string[];
                };
            };
            header?: {
                /** @description At most one run per flow and key within IDEMPOTENCY_TTL_HOURS: a repeat gets the first request's run (async: the same 202; sync: the same answer, waited for while the run runs). A repeat with another body is 422. A structured-field string (`"abc"`) or a bare token. */
                "Idempotency-Key"?: string;
            };
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "orderId": "A-1001",
                 *       "total": 42.5
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
                "application/octet-stream": string;
                "application/x-www-form-urlencoded": {
                    [key: string]: string | string[];
                };
                "text/plain": string;
            };
        };
        responses: {
            /** @description Accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "runId": "0b6f3c1e-6a0e-4c3e-9a55-5c1f2d7e8a90"
                     *     }
                     */
                    "application/json": components["schemas"]["RunAccepted"];
                };
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow is signed (trigger.verify) and the request's signature is missing, repeated, stale or wrong (WEBHOOK_SIGNATURE_INVALID); no run was created. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's trigger is a schedule (FLOW_NOT_WEBHOOK): it starts from its ticks or by hand (POST /v1/flows/{flowId}/runs); no run was created. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over WEBHOOK_BODY_LIMIT_BYTES (BODY_TOO_LARGE). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A flow id longer than 100 characters (fastify maxParamLength). */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The Idempotency-Key was sent before with another body, or to the other of the sync and async webhooks, within IDEMPOTENCY_TTL_HOURS (IDEMPOTENCY_KEY_REUSED, naming the key's run); no run was created. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow has too many queued or running runs (admission). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize). */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    triggerWebhookSyncGet: {
        parameters: {
            query?: {
                /** @description Any parameters; a repeated one reaches the flow as an array of its values. */
                query?: {
                    [key: string]: string | string[];
                };
            };
            header?: {
                /** @description At most one run per flow and key within IDEMPOTENCY_TTL_HOURS: a repeat gets the first request's run (async: the same 202; sync: the same answer, waited for while the run runs). A repeat with another body is 422. A structured-field string (`"abc"`) or a bare token. */
                "Idempotency-Key"?: string;
            };
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The flow's own response (its status, headers and body). A failed run answers the flow's `errorResponse` when it has one, else flowbox's error naming the run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The run succeeded but no step answered (no response step on the path it took): no body; `x-flowbox-run-id` names the run. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow is signed (trigger.verify) and the request's signature is missing, repeated, stale or wrong (WEBHOOK_SIGNATURE_INVALID); no run was created. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "FLOW_NOT_FOUND",
                     *         "message": "flow orders not found"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's trigger is a schedule (FLOW_NOT_WEBHOOK): it starts from its ticks or by hand (POST /v1/flows/{flowId}/runs); no run was created. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A flow id longer than 100 characters (fastify maxParamLength). */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The Idempotency-Key was sent before with another body, or to the other of the sync and async webhooks, within IDEMPOTENCY_TTL_HOURS (IDEMPOTENCY_KEY_REUSED, naming the key's run); no run was created. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow has too many queued or running runs (admission). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize). */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An internal error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's run failed before it answered. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No answer within WEBHOOK_TIMEOUT_SECONDS. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    triggerWebhookSync: {
        parameters: {
            query?: {
                /** @description Any parameters; a repeated one reaches the flow as an array of its values. */
                query?: {
                    [key: string]: string | string[];
                };
            };
            header?: {
                /** @description At most one run per flow and key within IDEMPOTENCY_TTL_HOURS: a repeat gets the first request's run (async: the same 202; sync: the same answer, waited for while the run runs). A repeat with another body is 422. A structured-field string (`"abc"`) or a bare token. */
                "Idempotency-Key"?: string;
            };
            path: {
                flowId: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "orderId": "A-1001",
                 *       "total": 42.5
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
                "application/octet-stream": string;
                "application/x-www-form-urlencoded": {
                    [key: string]: string | string[];
                };
                "text/plain": string;
            };
        };
        responses: {
            /** @description The flow's own response (its status, headers and body). A failed run answers the flow's `errorResponse` when it has one, else flowbox's error naming the run. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The run succeeded but no step answered (no response step on the path it took): no body; `x-flowbox-run-id` names the run. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow is signed (trigger.verify) and the request's signature is missing, repeated, stale or wrong (WEBHOOK_SIGNATURE_INVALID); no run was created. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such flow, version, run, piece or connection. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's trigger is a schedule (FLOW_NOT_WEBHOOK): it starts from its ticks or by hand (POST /v1/flows/{flowId}/runs); no run was created. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over WEBHOOK_BODY_LIMIT_BYTES (BODY_TOO_LARGE). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A flow id longer than 100 characters (fastify maxParamLength). */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The Idempotency-Key was sent before with another body, or to the other of the sync and async webhooks, within IDEMPOTENCY_TTL_HOURS (IDEMPOTENCY_KEY_REUSED, naming the key's run); no run was created. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow has too many queued or running runs (admission). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize). */
            431: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An internal error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The flow's run failed before it answered. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Redis or Postgres is unavailable, or the app is draining; retry later. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No answer within WEBHOOK_TIMEOUT_SECONDS. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "WEBHOOK_TIMEOUT",
                     *         "message": "no answer within 30 s"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
