import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnvFile, readText, readYaml, readYamlDocuments } from './repo.ts';

/**
 * Just enough of kustomize to render docker/k8s without the binary (CI has none): resources,
 * namespace, labels (metadata only), config map and secret generators from env files, images,
 * replicas and JSON 6902 patches with replace/add. Any other field fails the render, so the
 * manifests cannot outgrow what this checks. Generated names get no content hash here; the
 * test that runs the real `kubectl kustomize` (when present) covers that.
 */

export type Resource = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
};

interface Generator {
  name: string;
  envs: string[];
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  labels?: { pairs: Record<string, string> }[];
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { target: { kind: string; name: string }; patch: string }[];
}

const SUPPORTED = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'labels',
  'configMapGenerator',
  'secretGenerator',
  'images',
  'replicas',
  'patches',
]);

export interface RenderOptions {
  /** Reads a generator's env file; lets tests substitute the operator's secret files. */
  readEnvFile?: (path: string) => string;
}

export function render(dir: string, options: RenderOptions = {}): Resource[] {
  const kustomization = readYaml(join(dir, 'kustomization.yaml')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length > 0)
    throw new Error(`${dir}: unsupported kustomization fields ${unsupported.join(', ')}`);
  const readEnvFile = options.readEnvFile ?? readText;

  const resources: Resource[] = [];
  for (const entry of kustomization.resources ?? []) {
    const path = join(dir, entry);
    if (existsSync(path) && statSync(path).isDirectory()) resources.push(...render(path, options));
    else resources.push(...(readYamlDocuments(readText(path)) as Resource[]));
  }
  const generate = (kind: 'ConfigMap' | 'Secret', generators: Generator[] = []) => {
    for (const generator of generators) {
      const data: Record<string, string> = {};
      for (const file of generator.envs)
        for (const [k, v] of parseEnvFile(readEnvFile(join(dir, file)))) data[k] = v;
      const resource: Resource = { apiVersion: 'v1', kind, metadata: { name: generator.name } };
      if (kind === 'Secret') {
        resource.type = 'Opaque';
        resource.data = Object.fromEntries(
          Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        );
      } else {
        resource.data = data;
      }
      resources.push(resource);
    }
  };
  generate('ConfigMap', kustomization.configMapGenerator);
  generate('Secret', kustomization.secretGenerator);

  for (const resource of resources) {
    for (const { pairs } of kustomization.labels ?? []) {
      resource.metadata.labels = { ...resource.metadata.labels, ...pairs };
    }
    if (kustomization.namespace !== undefined) resource.metadata.namespace = kustomization.namespace;
    for (const container of containersOf(resource)) {
      const image = kustomization.images?.find((i) => container.image.split(':')[0] === i.name);
      if (image === undefined) continue;
      const [name, tag] = container.image.split(':');
      container.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}`;
    }
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const target = resources.find((r) => r.kind === 'Deployment' && r.metadata.name === name);
    if (target === undefined) throw new Error(`${dir}: replicas for unknown Deployment ${name}`);
    (target.spec as { replicas: number }).replicas = count;
  }
  for (const { target, patch } of kustomization.patches ?? []) {
    const resource = resources.find((r) => r.kind === target.kind && r.metadata.name === target.name);
    if (resource === undefined) throw new Error(`${dir}: patch for unknown ${target.kind} ${target.name}`);
    applyJsonPatch(resource, readYamlDocuments(patch)[0] as { op: string; path: string; value: unknown }[]);
  }
  return resources;
}

export function containersOf(
  resource: Resource,
): { name: string; image: string; [field: string]: unknown }[] {
  const spec = resource.spec as { template?: { spec?: { containers?: [] } } } | undefined;
  return spec?.template?.spec?.containers ?? [];
}

function applyJsonPatch(
  resource: Resource,
  operations: { op: string; path: string; value: unknown }[],
): void {
  for (const { op, path, value } of operations) {
    if (op !== 'replace' && op !== 'add') throw new Error(`unsupported patch op ${op}`);
    const keys = path.split('/').slice(1);
    const last = keys.pop();
    let node = resource as Record<string, unknown>;
    for (const key of keys) node = node[key] as Record<string, unknown>;
    if (last === undefined || node === undefined) throw new Error(`bad patch path ${path}`);
    if (op === 'replace' && !(last in node)) throw new Error(`replace of missing ${path}`);
    // `-` appends to an array (an env entry).
    if (op === 'add' && last === '-' && Array.isArray(node)) node.push(value);
    else node[last] = value;
  }
}
