import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  allStrings,
  interpolate,
  MissingVariableError,
  variableUses,
} from './support/compose-interpolation.ts';
import {
  DOCKER_DIR,
  defaultAsString,
  knownVariables,
  PROCESS_SCHEMAS,
  type ProcessName,
  parseEnvFile,
  readText,
  readYaml,
  requiredVariables,
} from './support/repo.ts';

/**
 * Static checks of docker/docker-compose.yml (no Docker engine runs here): the Compose
 * Specification's JSON schema, the secrets it demands, and every flowbox variable it sets
 * against the config schema of the process that reads it.
 */

interface Service {
  image?: string;
  profiles?: string[];
  build?: { context: string; dockerfile: string; target: string };
  command?: string[];
  /** A null value passes the variable through from docker/.env or the shell (unset stays unset). */
  environment?: Record<string, string | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  volumes?: string[];
  deploy?: { replicas?: string | number; resources?: { limits?: { cpus?: string; memory?: string } } };
}

interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

const raw = readYaml(`${DOCKER_DIR}/docker-compose.yml`) as ComposeFile;
/** The override that puts the apps behind the optional pgbouncer service. */
const pooledOverride = readYaml(`${DOCKER_DIR}/docker-compose.pgbouncer.yml`) as {
  services: Record<string, Service>;
};
const envExample = parseEnvFile(readText(`${DOCKER_DIR}/.env.example`));
const SECRET_NAME = /PASSWORD|SECRET|TOKEN|API_KEY|ACCESS_KEY/;

/** docker/.env as an operator fills it: the example with every secret given a value. */
function operatorEnv(): Map<string, string> {
  const env = new Map(envExample);
  for (const name of env.keys())
    if (SECRET_NAME.test(name)) env.set(name, `${name.toLowerCase()}-0123456789abcdef0123456789abcdef`);
  return env;
}

/** Services built from docker/Dockerfile, by the flowbox process their command starts. */
function flowboxProcess(service: Service): ProcessName | null {
  if (service.build === undefined) return null;
  if (service.command?.some((part) => part.includes('mint-worker-token'))) return 'mint-worker-token';
  return service.build.target === 'worker' ? 'worker' : 'app';
}

/** Variables a process gets elsewhere than from `environment:`, and why. */
const NOT_IN_ENVIRONMENT: Record<ProcessName, Record<string, string>> = {
  app: {
    HOST: 'the app image sets 0.0.0.0',
    PORT: 'the container port is fixed at the default (3000); FLOWBOX_PORT maps it on the host',
    INSTANCE_ID: 'must differ per app container, so each keeps its random default',
  },
  worker: {
    WORKER_TOKEN: 'the worker reads the minted token file instead (WORKER_TOKEN_FILE)',
    WORKER_ID: 'must differ per replica; the default uses the container hostname',
    CACHE_DIR: 'the default (under /tmp) is the container’s own disk',
    ENGINE_BUNDLE: 'the default is the bundle built into the image',
    METRICS_HOST: 'the default (0.0.0.0) is what a container needs',
    ENGINE_CPU_PROF_DIR: 'profiling only (pnpm bench --cpu-prof), never in a deployment',
  },
  'mint-worker-token': {},
};

/** Variables the file passes through by name (`NAME:` with no value). */
function passedThrough(): string[] {
  return Object.values(raw.services).flatMap((service) =>
    Object.entries(service.environment ?? {})
      .filter(([, value]) => value === null)
      .map(([name]) => name),
  );
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema once interpolated', () => {
    const schema = JSON.parse(readText(`${DOCKER_DIR}/test/schemas/compose-spec.json`)) as object;
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
    const rendered = interpolate(raw, operatorEnv()) as ComposeFile;
    expect(validate(rendered), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The validator is live: a misspelt key fails.
    const broken = structuredClone(rendered);
    (broken.services.app as Record<string, unknown>).depends_onn = {};
    expect(validate(broken)).toBe(false);
  });

  it('refuses to start without each secret, and has no default for any', () => {
    const uses = allStrings(raw).flatMap(variableUses);
    const secrets = [...new Set(uses.filter((u) => SECRET_NAME.test(u.name)).map((u) => u.name))];
    expect(secrets.sort()).toEqual(
      [
        'API_KEY',
        'POSTGRES_PASSWORD',
        'REDIS_PASSWORD',
        'S3_ACCESS_KEY_ID',
        'S3_SECRET_ACCESS_KEY',
        'TOKEN_SECRET',
        'WAIT_URL_SECRET',
      ].sort(),
    );
    for (const use of uses.filter((u) => SECRET_NAME.test(u.name))) {
      expect(use.operator, `${use.name} must be written \${${use.name}:?message}`).toBe(':?');
    }
    for (const name of secrets) {
      expect(envExample.get(name), `.env.example must leave ${name} empty`).toBe('');
      const env = operatorEnv();
      env.delete(name);
      expect(() => interpolate(raw, env)).toThrow(MissingVariableError);
      expect(() => interpolate(raw, env)).toThrow(name);
    }
  });

  it('reads only variables that docker/.env.example lists, and the example lists nothing unused', () => {
    const used = new Set([
      ...allStrings(raw)
        .flatMap(variableUses)
        .map((u) => u.name),
      ...passedThrough(),
    ]);
    expect([...used].filter((name) => !envExample.has(name))).toEqual([]);
    expect([...envExample.keys()].filter((name) => !used.has(name))).toEqual([]);
  });

  it('passes optional settings through by name, never with an empty default (podman-compose 1.0.3 leaves that unexpanded)', () => {
    const emptyDefaults = allStrings(raw)
      .flatMap(variableUses)
      .filter((use) => use.operator.endsWith('-') && use.argument === '');
    expect(emptyDefaults).toEqual([]);
    expect(passedThrough()).toContain('LOG_LEVEL');
    expect(passedThrough()).toContain('EXECUTION_MODE');
  });

  it('names every image through a variable whose default is the public image', () => {
    const env = operatorEnv();
    for (const name of env.keys()) if (/IMAGE$/.test(name)) env.delete(name);
    env.delete('FLOWBOX_TAG');
    const rendered = interpolate(raw, env) as ComposeFile;
    expect(Object.fromEntries(Object.entries(rendered.services).map(([name, s]) => [name, s.image]))).toEqual(
      {
        postgres: 'postgres:17',
        redis: 'redis:7.4',
        s3: 'versity/versitygw:v1.8.0',
        pgbouncer: 'edoburu/pgbouncer:v1.25.2-p0',
        app: 'flowbox-app:latest',
        'worker-token': 'flowbox-app:latest',
        worker: 'flowbox-worker:latest',
      },
    );
    for (const service of Object.values(raw.services))
      expect(variableUses(service.image ?? '')).not.toEqual([]);
  });

  it('sets only variables the config schemas know, and wires every other setting through', () => {
    const checked = new Set<ProcessName>();
    for (const [serviceName, service] of Object.entries(raw.services)) {
      const process = flowboxProcess(service);
      if (process === null) continue;
      checked.add(process);
      const known = knownVariables(process);
      const set = Object.keys(service.environment ?? {});
      expect(
        set.filter((name) => !known.has(name)),
        `${serviceName} sets variables no ${process} schema knows`,
      ).toEqual([]);
      const elsewhere = NOT_IN_ENVIRONMENT[process];
      const missing = [...known].filter((name) => !set.includes(name) && !(name in elsewhere));
      expect(missing, `${serviceName}: add these ${process} settings to its environment`).toEqual([]);
    }
    expect([...checked].sort()).toEqual(['app', 'mint-worker-token', 'worker']);
  });

  it('gives every required variable a value and repeats no default differently', () => {
    const rendered = interpolate(raw, operatorEnv()) as ComposeFile;
    for (const [serviceName, service] of Object.entries(raw.services)) {
      const process = flowboxProcess(service);
      if (process === null) continue;
      const env = rendered.services[serviceName]?.environment ?? {};
      for (const name of requiredVariables(process)) {
        if (name in NOT_IN_ENVIRONMENT[process]) continue;
        expect(env[name], `${serviceName}.${name}`).toBeTruthy();
      }
      for (const [name, value] of Object.entries(service.environment ?? {})) {
        if (value === null) continue;
        const whole = /^\$\{([A-Z0-9_]+):-([^}]*)\}$/.exec(value);
        if (whole === null || whole[2] === '') continue;
        expect(whole[2], `${serviceName}.${name}: a default here must match the schema's`).toBe(
          defaultAsString(process, name),
        );
      }
    }
  });

  it('starts in order: stores healthy, then the app healthy and the token minted, then workers', () => {
    const { postgres, redis, s3, app, worker } = raw.services;
    for (const store of [postgres, redis, s3]) expect(store?.healthcheck?.test?.length).toBeGreaterThan(0);
    expect(app?.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      s3: { condition: 'service_healthy' },
    });
    expect(app?.healthcheck?.test).toEqual(['CMD', 'node', 'docker/healthcheck.ts']);
    expect(worker?.depends_on).toEqual({
      app: { condition: 'service_healthy' },
      'worker-token': { condition: 'service_completed_successfully' },
    });
  });

  it('keeps each store on a named volume and Redis durable without eviction', () => {
    const mounts = (name: string) => raw.services[name]?.volumes?.map((v) => v.split(':')[0]) ?? [];
    expect(mounts('postgres')).toEqual(['postgres-data']);
    expect(mounts('redis')).toEqual(['redis-data']);
    expect(mounts('s3')).toEqual(['s3-data']);
    for (const volume of ['postgres-data', 'redis-data', 's3-data', 'worker-token'])
      expect(raw.volumes).toHaveProperty([volume]);
    const redisArgs = raw.services.redis?.command?.join(' ');
    expect(redisArgs).toContain('--appendonly yes');
    expect(redisArgs).toContain('--appendfsync everysec');
    expect(redisArgs).toContain('--maxmemory-policy noeviction');
  });

  it('scales workers by deploy.replicas at the reference size', () => {
    const worker = raw.services.worker;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own interpolation syntax
    expect(worker?.deploy?.replicas).toBe('${WORKER_REPLICAS:-2}');
    expect(worker?.deploy?.resources?.limits).toEqual({ cpus: '0.5', memory: '1g' });
  });
});

/** `docker compose -f a -f b`: mappings merge key by key, anything else in b replaces a's. */
function mergeCompose(base: unknown, override: unknown): unknown {
  const isMap = (node: unknown): node is Record<string, unknown> =>
    typeof node === 'object' && node !== null && !Array.isArray(node);
  if (!isMap(base) || !isMap(override)) return structuredClone(override);
  const merged: Record<string, unknown> = structuredClone(base);
  for (const [key, value] of Object.entries(override))
    merged[key] = key in merged ? mergeCompose(merged[key], value) : structuredClone(value);
  return merged;
}

describe('the optional pgbouncer service and docker-compose.pgbouncer.yml', () => {
  const pooled = mergeCompose(raw, pooledOverride) as ComposeFile;

  it('leaves a plain `up` unchanged: only pgbouncer has a profile, and nothing depends on it', () => {
    const withProfiles = Object.entries(raw.services).filter(([, service]) => service.profiles !== undefined);
    expect(withProfiles.map(([name, service]) => [name, service.profiles])).toEqual([
      ['pgbouncer', ['pgbouncer']],
    ]);
    for (const service of Object.values(raw.services))
      expect(service.depends_on ?? {}).not.toHaveProperty('pgbouncer');
  });

  it('pools the compose postgres in transaction mode, as its user and database', () => {
    const rendered = interpolate(raw, operatorEnv()) as ComposeFile;
    const pooler = rendered.services.pgbouncer?.environment ?? {};
    const postgres = rendered.services.postgres?.environment ?? {};
    expect(pooler.POOL_MODE).toBe('transaction');
    expect(pooler.DB_HOST).toBe('postgres');
    expect(pooler.DB_USER).toBe(postgres.POSTGRES_USER);
    expect(pooler.DB_NAME).toBe(postgres.POSTGRES_DB);
    expect(pooler.DB_PASSWORD).toBe(postgres.POSTGRES_PASSWORD);
    // postgres answers TCP logins with SCRAM; the pooler can only answer it holding the password.
    expect(pooler.AUTH_TYPE).toBe('scram-sha-256');
    const maxConnections = Number(
      /max_connections=(\d+)/.exec(rendered.services.postgres?.command?.join(' ') ?? '')?.[1],
    );
    expect(Number(pooler.DEFAULT_POOL_SIZE)).toBeLessThan(maxConnections);
    expect(raw.services.pgbouncer?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(raw.services.pgbouncer?.healthcheck?.test?.length).toBeGreaterThan(0);
  });

  it('points the app, and nothing else, at the pooler with prepared statements off', () => {
    expect(Object.keys(pooledOverride.services)).toEqual(['app']);
    const env = operatorEnv();
    const rendered = interpolate(pooled, env) as ComposeFile;
    const app = rendered.services.app?.environment ?? {};
    const pooler = rendered.services.pgbouncer?.environment ?? {};
    const url = new URL(app.DATABASE_URL ?? '');
    expect({ host: url.hostname, port: url.port || '5432' }).toEqual({
      host: 'pgbouncer',
      port: pooler.LISTEN_PORT ?? '5432',
    });
    expect(url.username).toBe(pooler.DB_USER);
    expect(decodeURIComponent(url.password)).toBe(pooler.DB_PASSWORD);
    expect(url.pathname).toBe(`/${pooler.DB_NAME}`);
    const prepared = PROCESS_SCHEMAS.app.shape.DATABASE_PREPARED_STATEMENTS;
    expect(prepared?.parse(app.DATABASE_PREPARED_STATEMENTS)).toBe(false);
    // Whatever docker/.env says: named statements cannot cross a transaction-mode pooler.
    env.set('DATABASE_PREPARED_STATEMENTS', 'true');
    expect(
      (interpolate(pooled, env) as ComposeFile).services.app?.environment?.DATABASE_PREPARED_STATEMENTS,
    ).toBe('false');
    expect(pooled.services.app?.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      s3: { condition: 'service_healthy' },
      pgbouncer: { condition: 'service_healthy' },
    });
    // Without the override the app talks to postgres itself, with its default.
    const direct = (interpolate(raw, operatorEnv()) as ComposeFile).services.app?.environment ?? {};
    expect(new URL(direct.DATABASE_URL ?? '').hostname).toBe('postgres');
    expect(prepared?.parse(direct.DATABASE_PREPARED_STATEMENTS)).toBe(true);
  });

  it('is valid once merged, reads only listed variables and demands its secret', () => {
    const schema = JSON.parse(readText(`${DOCKER_DIR}/test/schemas/compose-spec.json`)) as object;
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
    expect(validate(interpolate(pooled, operatorEnv())), JSON.stringify(validate.errors, null, 2)).toBe(true);
    const uses = allStrings(pooledOverride).flatMap(variableUses);
    expect(uses.map((use) => use.name).filter((name) => !envExample.has(name))).toEqual([]);
    for (const use of uses.filter((u) => SECRET_NAME.test(u.name))) expect(use.operator).toBe(':?');
    const env = operatorEnv();
    env.delete('POSTGRES_PASSWORD');
    expect(() => interpolate(pooledOverride, env)).toThrow('POSTGRES_PASSWORD');
  });
});
