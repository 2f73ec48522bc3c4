import { copyFile, link, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { FlowboxError } from '@flowbox/protocol';

/**
 * What a sandboxed engine sees of the worker's cache: at the cache's own artifact paths
 * (`<cache>/bundles`, `<cache>/pieces`), directories of this engine's that hold only the entries
 * its current job names, hard-linked from the cache (copied where a link cannot be made). The
 * bind mounts are made once, when the engine starts; a warm engine sees each next job's entries
 * because the worker changes what the bound directories hold, never the mounts. So an engine
 * never sees another flow's bundle, and a job's paths are the same inside as outside.
 */
export interface JobView {
  /** Bound read-only into the sandbox: each view directory at the artifact directory it stands for. */
  readonly binds: Array<{ source: string; target: string }>;
  /**
   * Makes the view hold exactly these cache entries (files or directories under the artifact
   * directories): missing ones are linked in, others removed. Calls run one at a time, in order.
   */
  show(entries: string[]): Promise<void>;
  /** Removes the view's directories. */
  dispose(): Promise<void>;
}

export async function createJobView(options: {
  /** The cache's artifact directories (bundles, pieces). */
  artifactDirs: string[];
  /** A directory on the cache's filesystem, so entries can be hard links; the view is made in it. */
  viewsDir: string;
}): Promise<JobView> {
  await mkdir(options.viewsDir, { recursive: true });
  const root = await mkdtemp(path.join(options.viewsDir, 'view-'));
  const binds = options.artifactDirs.map((target) => ({
    source: path.join(root, path.basename(target)),
    target,
  }));
  for (const { source, target } of binds) {
    await mkdir(source);
    await mkdir(target, { recursive: true });
  }
  let turn: Promise<unknown> = Promise.resolve();

  const reconcile = async (entries: string[]): Promise<void> => {
    const wanted = new Map<string, Set<string>>(binds.map(({ target }) => [target, new Set()]));
    for (const entry of entries) {
      const dir = path.dirname(entry);
      const names = wanted.get(dir);
      if (names === undefined) {
        throw new FlowboxError('INTERNAL', `${entry} is not an entry of the cache's artifact directories`);
      }
      names.add(path.basename(entry));
    }
    for (const { source, target } of binds) {
      const names = wanted.get(target) ?? new Set<string>();
      const present = new Set(await readdir(source));
      for (const name of present) {
        if (!names.has(name)) await rm(path.join(source, name), { recursive: true, force: true });
      }
      // Entries are named by content hash: one already present holds the same bytes.
      for (const name of names) {
        if (present.has(name)) continue;
        try {
          await mirror(path.join(target, name), path.join(source, name));
        } catch (error) {
          // Not left half made under a name that says it is there.
          await rm(path.join(source, name), { recursive: true, force: true });
          throw new FlowboxError(
            'PROVISION_FAILED',
            `could not show ${name} to the sandbox: ${String(error)}`,
            {
              cause: error,
            },
          );
        }
      }
    }
  };

  return {
    binds,
    show(entries) {
      const next = turn.then(() => reconcile(entries));
      turn = next.catch(() => {});
      return next;
    },
    async dispose() {
      await turn;
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A file as a hard link, a directory as directories of hard links (artifacts hold nothing else). */
async function mirror(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (entries === null) return linkOrCopy(from, to);
  await mkdir(to);
  for (const entry of entries) {
    if (entry.isDirectory()) await mirror(path.join(from, entry.name), path.join(to, entry.name));
    else if (entry.isFile()) await linkOrCopy(path.join(from, entry.name), path.join(to, entry.name));
  }
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another filesystem, or one that refuses hard links: the bytes are small and verified.
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
    await copyFile(from, to);
  }
}
