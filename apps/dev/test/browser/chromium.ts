import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { findExecutable, splitPath } from '../../../../packages/local-services/src/index.ts';

/** Debian's package (`apt-get install chromium`) puts it on PATH as `chromium`. */
export function findChromium(pathEnv: string | undefined): string | null {
  return findExecutable('chromium', [...splitPath(pathEnv), '/usr/bin']);
}

export const CHROMIUM_MISSING =
  'chromium is not installed: the inspector browser test drives it headless. ' +
  'On Debian or Ubuntu: apt-get install -y chromium (CI installs it in .ci/run).';

/**
 * Without the background-networking switches Chromium calls home (updates, sync, field trials,
 * QUIC probes), which on a machine without internet means a flood of failing connections.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile of its own, removed on close. */
export async function launchChromium(executablePath: string): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'flowbox-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
    });
    return {
      context,
      async close() {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
