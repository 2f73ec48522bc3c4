import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { containersOf, type Resource, render } from './support/kustomize.ts';
import {
  DOCKER_DIR,
  knownVariables,
  type ProcessName,
  readText,
  readYamlDocuments,
  requiredVariables,
} from './support/repo.ts';

/**
 * Static checks of docker/k8s (no cluster here): every rendered resource against the vendored
 * Kubernetes v1.30 strict schemas, every variable against the config schemas, and the sizing and
 * ratios the issue asks for. The operator's secret files are stood in for by their examples.
 */

const K8S_DIR = join(DOCKER_DIR, 'k8s');
const withExampleSecrets = (path: string) =>
  readText(path.endsWith('.env') && path.includes('/secrets/') ? `${path}.example` : path);
const renderDir = (dir: string) => render(join(K8S_DIR, dir), { readEnvFile: withExampleSecrets });
const OVERLAYS = { 'overlays/ratio-1-10': 10, 'overlays/ratio-1-20': 20 } as const;
const PID_NAMESPACE_OVERLAY = 'overlays/engine-pid-namespace';
const ALL_DIRS = ['base', ...Object.keys(OVERLAYS), PID_NAMESPACE_OVERLAY];

const KIND_FILES: Record<string, string> = {
  'v1/ConfigMap': 'configmap-v1.json',
  'v1/Secret': 'secret-v1.json',
  'v1/Service': 'service-v1.json',
  'apps/v1/Deployment': 'deployment-apps-v1.json',
  'autoscaling/v2/HorizontalPodAutoscaler': 'horizontalpodautoscaler-autoscaling-v2.json',
};

function kubernetesValidators() {
  const vendored = JSON.parse(readText(join(DOCKER_DIR, 'test', 'schemas', 'kubernetes-strict.json'))) as {
    definitions: object;
    kinds: Record<string, object>;
  };
  // Formats such as int32 and int-or-string are Kubernetes' own; types and fields are what matter.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(vendored.definitions);
  return (resource: Resource) => {
    const file = KIND_FILES[`${resource.apiVersion}/${resource.kind}`];
    if (file === undefined) throw new Error(`no schema vendored for ${resource.apiVersion} ${resource.kind}`);
    const schema = vendored.kinds[file];
    if (schema === undefined) throw new Error(`${file} missing from kubernetes-strict.json`);
    const validate = ajv.getSchema((schema as { $id: string }).$id) ?? ajv.compile(schema);
    return { valid: validate(resource) as boolean, errors: validate.errors };
  };
}

function find(resources: Resource[], kind: string, name: string): Resource {
  const resource = resources.find((r) => r.kind === kind && r.metadata.name === name);
  if (resource === undefined) throw new Error(`${kind} ${name} is not rendered`);
  return resource;
}

/** Every variable a container's environment gets: env, config maps and secrets. */
function containerVariables(resources: Resource[], container: Record<string, unknown>): string[] {
  const names = ((container.env as { name: string }[] | undefined) ?? []).map((e) => e.name);
  for (const source of (container.envFrom as Record<string, { name: string }>[] | undefined) ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
    if (ref === undefined) throw new Error('envFrom without configMapRef or secretRef');
    names.push(...Object.keys(find(resources, kind, ref.name).data as object));
  }
  return names;
}

const PROCESS_OF: Record<string, ProcessName> = { 'flowbox-app': 'app', 'flowbox-worker': 'worker' };

describe('kubernetes manifests', () => {
  const validate = kubernetesValidators();

  it.each(ALL_DIRS)('%s renders resources valid against the Kubernetes v1.30 strict schemas', (dir) => {
    const resources = renderDir(dir);
    expect(resources.map((r) => `${r.kind}/${r.metadata.name}`).sort()).toEqual(
      [
        'ConfigMap/flowbox-app-config',
        'ConfigMap/flowbox-worker-config',
        'Deployment/flowbox-app',
        'Deployment/flowbox-worker',
        'HorizontalPodAutoscaler/flowbox-worker',
        'Secret/flowbox-app-secrets',
        'Secret/flowbox-worker-secrets',
        'Service/flowbox-app',
      ].sort(),
    );
    for (const resource of resources) {
      const { valid, errors } = validate(resource);
      expect(valid, `${resource.kind} ${resource.metadata.name}: ${JSON.stringify(errors, null, 2)}`).toBe(
        true,
      );
    }
  });

  it('the schema check is live: an unknown container field fails', () => {
    const deployment = structuredClone(find(renderDir('base'), 'Deployment', 'flowbox-app'));
    const [container] = containersOf(deployment);
    if (container === undefined) throw new Error('no container');
    container.envFromm = [];
    expect(validate(deployment).valid).toBe(false);
  });

  it('gives each process only variables its config schema knows, and all it requires', () => {
    const resources = renderDir('base');
    for (const [deployment, process] of Object.entries(PROCESS_OF)) {
      const [container] = containersOf(find(resources, 'Deployment', deployment));
      if (container === undefined) throw new Error(`${deployment} has no container`);
      const names = containerVariables(resources, container);
      const known = knownVariables(process);
      expect(
        names.filter((n) => !known.has(n)),
        `${deployment} sets variables ${process} does not read`,
      ).toEqual([]);
      expect(requiredVariables(process).filter((n) => !names.includes(n))).toEqual([]);
    }
  });

  it('keeps the app’s credentials away from workers', () => {
    const resources = renderDir('base');
    const [worker] = containersOf(find(resources, 'Deployment', 'flowbox-worker'));
    const names = containerVariables(resources, worker as Record<string, unknown>);
    expect(names.filter((n) => /DATABASE|REDIS|S3_|TOKEN_SECRET|API_KEY/.test(n))).toEqual([]);
  });

  it('sizes pods as the reference does and probes the app', () => {
    const resources = renderDir('base');
    const resourcesOf = (name: string) => containersOf(find(resources, 'Deployment', name))[0]?.resources;
    expect(resourcesOf('flowbox-app')).toEqual({
      requests: { cpu: '1', memory: '1Gi' },
      limits: { cpu: '1', memory: '1Gi' },
    });
    expect(resourcesOf('flowbox-worker')).toEqual({
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '500m', memory: '1Gi' },
    });
    const [app] = containersOf(find(resources, 'Deployment', 'flowbox-app'));
    if (app === undefined) throw new Error('the app Deployment has no container');
    const probePath = (probe: string) => (app[probe] as { httpGet: { path: string } }).httpGet.path;
    expect(probePath('readinessProbe')).toBe('/health/ready');
    expect(probePath('livenessProbe')).toBe('/health/live');
    expect(probePath('startupProbe')).toBe('/health/live');
  });

  it('points workers at the app Service, whose selector matches the app pods', () => {
    const resources = renderDir('base');
    const service = find(resources, 'Service', 'flowbox-app');
    const spec = service.spec as { selector: Record<string, string>; ports: { port: number }[] };
    const podLabels = (
      find(resources, 'Deployment', 'flowbox-app').spec as { template: { metadata: { labels: object } } }
    ).template.metadata.labels;
    expect(podLabels).toMatchObject(spec.selector);
    const appUrl = (find(resources, 'ConfigMap', 'flowbox-worker-config').data as Record<string, string>)
      .APP_URL;
    expect(appUrl).toBe(`http://flowbox-app:${spec.ports[0]?.port}`);
    const hpa = find(resources, 'HorizontalPodAutoscaler', 'flowbox-worker').spec as {
      scaleTargetRef: object;
    };
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'flowbox-worker' });
  });

  // bubblewrap in a container needs unconfined profiles and an unmasked /proc, which needs a pod
  // user namespace: the base runs engines beside the worker under the runtime's default profiles;
  // the overlay asks for all that bubblewrap needs, and only for workers.
  it('base: engines beside the worker (ENGINE_PID_NAMESPACE=false) under the default profiles', () => {
    const resources = renderDir('base');
    const worker = find(resources, 'Deployment', 'flowbox-worker');
    const pod = (worker.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(pod.hostUsers).toBeUndefined();
    expect(pod.securityContext).toMatchObject({
      seccompProfile: { type: 'RuntimeDefault' },
      appArmorProfile: { type: 'RuntimeDefault' },
    });
    expect(containersOf(worker)[0]?.securityContext).not.toHaveProperty('procMount');
    expect(find(resources, 'ConfigMap', 'flowbox-worker-config').data).toMatchObject({
      ENGINE_PID_NAMESPACE: 'false',
    });
  });

  it(`${PID_NAMESPACE_OVERLAY}: engines in their PID namespace, with what bubblewrap needs in a pod`, () => {
    const resources = renderDir(PID_NAMESPACE_OVERLAY);
    const worker = find(resources, 'Deployment', 'flowbox-worker');
    const pod = (worker.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(pod.hostUsers).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'Unconfined' },
      appArmorProfile: { type: 'Unconfined' },
    });
    const [container] = containersOf(worker);
    expect(container?.securityContext).toMatchObject({
      procMount: 'Unmasked',
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.securityContext).not.toHaveProperty('privileged');
    // The container's own env wins over the config map's ENGINE_PID_NAMESPACE=false.
    expect(container?.env).toContainEqual({ name: 'ENGINE_PID_NAMESPACE', value: 'true' });
    expect(knownVariables('worker').has('ENGINE_PID_NAMESPACE')).toBe(true);
    // The app's pods keep the runtime's defaults.
    const app = find(resources, 'Deployment', 'flowbox-app');
    expect(
      (app.spec as { template: { spec: Record<string, unknown> } }).template.spec.hostUsers,
    ).toBeUndefined();
  });

  it.each(Object.entries(OVERLAYS))('%s holds 1 app to %i workers', (dir, workers) => {
    const resources = renderDir(dir);
    expect((find(resources, 'Deployment', 'flowbox-app').spec as { replicas: number }).replicas).toBe(1);
    expect((find(resources, 'Deployment', 'flowbox-worker').spec as { replicas: number }).replicas).toBe(
      workers,
    );
    expect(find(resources, 'HorizontalPodAutoscaler', 'flowbox-worker').spec).toMatchObject({
      minReplicas: workers,
      maxReplicas: workers,
    });
    for (const resource of resources) expect(resource.metadata.namespace).toBe('flowbox');
  });

  // The real kustomize, where one is installed (not in CI): the render above must agree with it.
  const kubectl = (() => {
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!kubectl).each(ALL_DIRS)('%s renders the same with kubectl kustomize', (dir) => {
    const copy = mkdtempSync(join(tmpdir(), 'flowbox-k8s-'));
    try {
      cpSync(K8S_DIR, copy, { recursive: true });
      for (const name of ['app', 'worker']) {
        cpSync(
          join(copy, 'base', 'secrets', `${name}.env.example`),
          join(copy, 'base', 'secrets', `${name}.env`),
        );
      }
      const output = execFileSync('kubectl', ['kustomize', join(copy, dir)], { encoding: 'utf8' });
      const real = readYamlDocuments(output) as Resource[];
      // kustomize folds long base64 values over several lines.
      for (const secret of real.filter((r) => r.kind === 'Secret')) {
        const data = secret.data as Record<string, string>;
        for (const key of Object.keys(data)) data[key] = (data[key] ?? '').replace(/\s/g, '');
      }
      // kustomize appends a content hash to generated names and rewrites references to them.
      const unhash = (resources: Resource[]) =>
        JSON.parse(
          JSON.stringify(resources).replace(
            /(flowbox-(?:app|worker)-(?:config|secrets))-[a-z0-9]{10}/g,
            '$1',
          ),
        );
      const byKey = (resources: Resource[]) =>
        Object.fromEntries(resources.map((r) => [`${r.kind}/${r.metadata.name}`, r]));
      expect(byKey(unhash(real))).toEqual(byKey(renderDir(dir)));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
