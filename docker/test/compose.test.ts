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
    WORKER_TOKEN: 'read by the command from the minted token file',
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
