/**
 * A simulated worker fleet as its own process, so its CPU is counted apart from the apps and the
 * load generator (`sim` in the report). Started by the benchmark runner for `sim-…` scenarios;
 * stops on SIGTERM or when its parent's IPC channel closes.
 */
import { readFileSync } from 'node:fs';
import { createLogger } from '@flowbox/node-kit';
import { FleetConfigSchema } from './fleet-config.ts';
import { startSimulatedFleet } from './simulated-fleet.ts';

const configPath = process.env.SIM_FLEET_CONFIG;
if (configPath === undefined) throw new Error('SIM_FLEET_CONFIG must name the fleet config file');
const config = FleetConfigSchema.parse(JSON.parse(readFileSync(configPath, 'utf8')));
const logger = createLogger({ name: 'sim-fleet', level: config.logLevel });
const fleet = startSimulatedFleet({ ...config, logger });
let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  void fleet.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
process.send?.({ type: 'ready' });
