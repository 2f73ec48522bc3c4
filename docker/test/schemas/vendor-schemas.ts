import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Refreshes the vendored JSON schemas the static deployment tests validate against (see
 * README.md here for where the inputs come from). Kubernetes' definitions file is 1.5 MB; only
 * the definitions the manifests' kinds reach are kept.
 *
 *   node docker/test/schemas/vendor-schemas.ts \
 *     --compose <compose-go>/schema/compose-spec.json \
 *     --kubernetes <kubernetes_validate>/kubernetes-json-schema/v1.30.0-local-strict
 */

const HERE = import.meta.dirname;

/** The kinds docker/k8s uses: file name in the schema folder → definition name. */
export const KUBERNETES_KINDS: Record<string, string> = {
  'configmap-v1.json': 'io.k8s.api.core.v1.ConfigMap',
  'secret-v1.json': 'io.k8s.api.core.v1.Secret',
  'service-v1.json': 'io.k8s.api.core.v1.Service',
  'deployment-apps-v1.json': 'io.k8s.api.apps.v1.Deployment',
  'horizontalpodautoscaler-autoscaling-v2.json': 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
};

type Json = Record<string, unknown>;

function referencedDefinitions(node: unknown, found: Set<string>): void {
  const text = JSON.stringify(node);
  for (const match of text.matchAll(/#\/\$defs\/([^"]+)"/g)) if (match[1] !== undefined) found.add(match[1]);
}

async function vendorKubernetes(dir: string, version: string): Promise<void> {
  const definitions = JSON.parse(await readFile(join(dir, '_definitions.json'), 'utf8')) as Json & {
    $defs: Record<string, unknown>;
  };
  const kinds: Record<string, unknown> = {};
  const pending = new Set<string>();
  for (const file of Object.keys(KUBERNETES_KINDS)) {
    const schema = JSON.parse(await readFile(join(dir, file), 'utf8')) as unknown;
    kinds[file] = schema;
    referencedDefinitions(schema, pending);
  }
  const kept: Record<string, unknown> = {};
  for (const name of pending) {
    if (name in kept) continue;
    const definition = definitions.$defs[name];
    if (definition === undefined) throw new Error(`definition ${name} is missing from ${dir}`);
    kept[name] = definition;
    referencedDefinitions(definition, pending);
  }
  const sorted = Object.fromEntries(Object.entries(kept).sort(([a], [b]) => a.localeCompare(b)));
  const out = {
    version,
    definitions: { $schema: definitions.$schema, $id: definitions.$id, $defs: sorted },
    kinds,
  };
  await writeFile(join(HERE, 'kubernetes-strict.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`kubernetes ${version}: ${Object.keys(sorted).length} definitions kept`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { compose: { type: 'string' }, kubernetes: { type: 'string' } } });
  if (values.compose !== undefined) {
    // Re-serialised rather than copied: the module cache's copy is read-only, and this keeps the
    // formatting the linter expects.
    const schema = JSON.parse(await readFile(values.compose, 'utf8')) as unknown;
    await writeFile(join(HERE, 'compose-spec.json'), `${JSON.stringify(schema, null, 2)}\n`);
    console.log('compose-spec.json copied');
  }
  if (values.kubernetes !== undefined) {
    const version = /v\d+\.\d+\.\d+/.exec(values.kubernetes)?.[0];
    if (version === undefined) throw new Error('--kubernetes must name a vX.Y.Z-local-strict folder');
    await vendorKubernetes(values.kubernetes, version);
  }
}

if (import.meta.main) await main();
