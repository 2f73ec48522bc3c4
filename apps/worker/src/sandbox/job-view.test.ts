import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJobView, type JobView } from './job-view.ts';

describe('a sandboxed engine’s view of the cache', () => {
  let cache: string;
  let view: JobView;
  const bundles = () => path.join(cache, 'bundles');
  const pieces = () => path.join(cache, 'pieces');
  const sourceOf = (target: string) => view.binds.find((bind) => bind.target === target)?.source ?? '';

  beforeEach(async () => {
    cache = await mkdtemp(path.join(tmpdir(), 'flowbox-view-test-'));
    await mkdir(path.join(pieces(), 'a@1-aaa', 'lib'), { recursive: true });
    await mkdir(path.join(pieces(), 'b@1-bbb'), { recursive: true });
    await mkdir(bundles(), { recursive: true });
    await writeFile(path.join(bundles(), 'flow-1-111.json'), '{"flow":1}');
    await writeFile(path.join(bundles(), 'flow-2-222.json'), '{"flow":2}');
    await writeFile(path.join(pieces(), 'a@1-aaa', 'index.mjs'), 'export {}');
    await writeFile(path.join(pieces(), 'a@1-aaa', 'lib', 'util.mjs'), 'export const a = 1');
    await writeFile(path.join(pieces(), 'b@1-bbb', 'index.mjs'), 'export {}');
    view = await createJobView({ artifactDirs: [bundles(), pieces()], viewsDir: path.join(cache, 'views') });
  });

  afterEach(async () => {
    await view.dispose();
    await rm(cache, { recursive: true, force: true });
  });

  it('holds exactly the job’s entries, as hard links, and follows job after job', async () => {
    expect(view.binds.map((bind) => bind.target)).toEqual([bundles(), pieces()]);
    expect(await readdir(sourceOf(bundles()))).toEqual([]);

    await view.show([path.join(bundles(), 'flow-1-111.json'), path.join(pieces(), 'a@1-aaa')]);
    expect(await readdir(sourceOf(bundles()))).toEqual(['flow-1-111.json']);
    expect(await readdir(sourceOf(pieces()))).toEqual(['a@1-aaa']);
    const linked = path.join(sourceOf(pieces()), 'a@1-aaa', 'lib', 'util.mjs');
    expect(await readFile(linked, 'utf8')).toBe('export const a = 1');
    expect((await stat(linked)).ino).toBe(
      (await stat(path.join(pieces(), 'a@1-aaa', 'lib', 'util.mjs'))).ino,
    );

    // The next job of a warm engine: the other flow's entries appear, the first one's go.
    await view.show([path.join(bundles(), 'flow-2-222.json'), path.join(pieces(), 'b@1-bbb')]);
    expect(await readdir(sourceOf(bundles()))).toEqual(['flow-2-222.json']);
    expect(await readdir(sourceOf(pieces()))).toEqual(['b@1-bbb']);

    await view.show([]);
    expect(await readdir(sourceOf(bundles()))).toEqual([]);
    expect(await readdir(sourceOf(pieces()))).toEqual([]);
    // The cache itself is untouched.
    expect(await readdir(bundles())).toEqual(['flow-1-111.json', 'flow-2-222.json']);
  });

  it('refuses what is not an entry of the artifact directories, and a missing entry leaves nothing behind', async () => {
    await expect(view.show([path.join(cache, 'elsewhere.json')])).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(view.show([path.join(pieces(), 'missing@1-ccc')])).rejects.toMatchObject({
      code: 'PROVISION_FAILED',
    });
    expect(await readdir(sourceOf(pieces()))).toEqual([]);
    // The view goes on working after a refusal.
    await view.show([path.join(bundles(), 'flow-1-111.json')]);
    expect(await readdir(sourceOf(bundles()))).toEqual(['flow-1-111.json']);
  });

  it('is removed on dispose', async () => {
    const root = path.dirname(sourceOf(bundles()));
    await view.dispose();
    expect(existsSync(root)).toBe(false);
  });
});
