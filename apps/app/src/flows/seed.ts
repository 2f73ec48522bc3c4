import { BENCHMARK_FLOW_ID, BENCHMARK_FLOWS } from '@flowbox/protocol';
import type { FlowPublisher } from './flow-publisher.ts';
import type { FlowsRepository } from './flows-repository.ts';

export { BENCHMARK_FLOW, BENCHMARK_FLOW_ID } from '@flowbox/protocol';

/** The seeded version's id: `<flowId>-v1`, as the flows repository numbers versions. */
export const BENCHMARK_FLOW_VERSION_ID = `${BENCHMARK_FLOW_ID}-v1`;

/**
 * Creates and publishes the benchmark flows on first start (the benchmark flow, and the loop and
 * router flows of the `loop100` and `router` scenarios). A version left without a bundle
 * (created before bundles existed, or by a start that died mid-way) is published now.
 * Returns true when it changed anything.
 */
export async function seedBenchmarkFlow(flows: FlowsRepository, publisher: FlowPublisher): Promise<boolean> {
  let changed = false;
  for (const { id, name, definition } of BENCHMARK_FLOWS) {
    const created = await flows.createFlow({ id, name, definition });
    const version = created ?? (await flows.getVersion(`${id}-v1`));
    if (created !== null) changed = true;
    if (version === null || version.bundle !== null) continue;
    await publisher.publish(version);
    changed = true;
  }
  return changed;
}
