import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * isolated-vm's native addon, linked beside an installed engine bundle (the worker's
 * engine-install.ts, and measure-boot.ts): an engine started from the startup snapshot requires
 * it directly (snapshot-main.ts) rather than through the package, whose node-gyp-build would look
 * for the binary again in every fresh engine.
 */
export const ISOLATED_VM_ADDON_FILE = 'isolated-vm.node';

/**
 * The addon binary the package at `isolatedVmDir` would load, found with the package's own
 * node-gyp-build; undefined when it cannot say (an engine then loads the package).
 */
export function isolatedVmAddonPath(isolatedVmDir: string): string | undefined {
  try {
    const requireFromPackage = createRequire(path.join(isolatedVmDir, 'package.json'));
    return (requireFromPackage('node-gyp-build') as { path(dir: string): string }).path(isolatedVmDir);
  } catch {
    return undefined;
  }
}
