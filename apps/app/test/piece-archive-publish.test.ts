import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createLogger } from '@flowbox/node-kit';
import { extractArchive } from '@flowbox/node-kit/archive-extract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import type { AppConfig } from '../src/env.ts';
import { loadCheckIsolation } from '../src/pieces/piece-load-sandbox.ts';
import { PieceRegistry } from '../src/pieces/piece-registry.ts';
import { createPiecesRepository } from '../src/pieces/pieces-repository.ts';
import { PublishGate } from '../src/pieces/publish-gate.ts';
import { ObjectStorage } from '../src/storage/object-storage.ts';
import { manage, startTestApp, testAppConfig } from './app-harness.ts';
import { goodPiece, manifestOf, paxRecord, pieceSource, type RawEntry, tarGz } from './piece-archives.ts';

const PIECE = { name: 'tar-trick', version: '1.0.0' };
const MIB = 1024 * 1024;

function storageOf(config: AppConfig): ObjectStorage {
  return new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
}

/** A publish body whose archive holds `entries` then the manifest. */
function bodyOf(entries: RawEntry[]) {
  const archive = tarGz([...entries, { name: 'manifest.json', data: JSON.stringify(manifestOf(PIECE)) }]);
  return { manifest: manifestOf(PIECE), archive: archive.toString('base64') };
}

describe('piece archives are checked as a worker unpacks them (POST /v1/pieces)', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;

  beforeAll(async () => {
    // The defaults but for the unpacked cap, so a bomb over it stays quick to build.
    ({ app, url, config } = await startTestApp({ PIECE_UNPACKED_MAX_BYTES: String(16 * MIB) }));
  });
  afterAll(async () => {
    await app.close();
  });

  const publish = async (body: unknown) => {
    const response = await manage(url, 'POST', '/v1/pieces', body);
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it("checks the entry a pax size record hides inside another entry's data, as the worker runs it", async () => {
    const hiddenSource = pieceSource(PIECE, {
      prelude: "import { readFileSync } from 'node:fs';\nvoid readFileSync;",
      greeting: 'hidden',
    });
    // A complete tar entry, without the end blocks or gzip: the data of `cover.txt` by its ustar
    // size; its pax record says 0 bytes, so a pax-honouring reader reads it as the next entry.
    const hidden = tarGz([{ name: 'index.mjs', data: hiddenSource }], { end: false, gzip: false });
    const body = bodyOf([
      { name: 'index.mjs', data: pieceSource(PIECE) },
      { name: 'PaxHeader', type: 'x', data: paxRecord('size', '0') },
      { name: 'cover.txt', data: hidden },
    ]);
    const created = await publish(body);
    expect(created.status).toBe(201);
    // The module the registry loaded is the hidden one: only it imports node:fs.
    expect(created.json).toMatchObject({
      piece: { nodeBuiltins: ['fs'], isolate: { supported: false, reason: 'imports node:fs' } },
    });

    // The stored archive, unpacked with the worker's reader, holds that same module.
    const { sha256 } = (created.json as { piece: { sha256: string } }).piece;
    const storage = storageOf(config);
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-stored-piece-'));
    try {
      const key = `pieces/${PIECE.name}/${PIECE.version}/${sha256}.tgz`;
      const stored = Buffer.from(await (await fetch(await storage.presignDownload(key, 60))).arrayBuffer());
      expect((await extractArchive(stored, dir)).sort()).toEqual(['cover.txt', 'index.mjs', 'manifest.json']);
      expect(await readFile(join(dir, 'index.mjs'), 'utf8')).toBe(hiddenSource);
    } finally {
      storage.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [
      'a contiguous file (tar type 7), which the worker refuses',
      [
        { name: 'index.mjs', data: pieceSource(PIECE) },
        { name: 'extra.mjs', type: '7', data: 'x' },
      ],
      /"extra\.mjs" \(a contiguous file \(tar type 7\)/,
    ],
    [
      'an entry under a file (a, then a/b)',
      [
        { name: 'index.mjs', data: pieceSource(PIECE) },
        { name: 'a', data: 'x' },
        { name: 'a/b', type: '5' },
      ],
      /"a\/b" \(under the file "a"\)/,
    ],
    [
      'a file where a directory is (a/c, then a)',
      [
        { name: 'index.mjs', data: pieceSource(PIECE) },
        { name: 'a/c', data: 'x' },
        { name: 'a', data: 'y' },
      ],
      /"a" \(a file where a directory is\)/,
    ],
  ])('refuses %s with a 400 INVALID_PIECE, storing nothing', async (_name, entries, message) => {
    const answer = await publish(bodyOf(entries as RawEntry[]));
    expect(answer).toMatchObject({
      status: 400,
      json: { error: { code: 'INVALID_PIECE', message: expect.stringMatching(message) } },
    });
    expect((await manage(url, 'GET', `/v1/pieces/${PIECE.name}`)).status).toBe(200); // the first test's only
  });

  it('refuses an archive that unpacks past PIECE_UNPACKED_MAX_BYTES; eight at once stay bounded', async () => {
    // ~100 KB packed, 95 MiB unpacked: one file of zeros.
    const tar = tarGz([{ name: 'zeros.bin', data: Buffer.alloc(95 * MIB) }], { gzip: false });
    const bomb = {
      manifest: manifestOf({ name: 'bomb', version: '1.0.0' }),
      archive: gzipSync(tar, { level: 9 }).toString('base64'),
    };
    expect(bomb.archive.length).toBeLessThan(200 * 1024);
    const before = process.memoryUsage().rss;
    const answers = await Promise.all(Array.from({ length: 8 }, () => publish(bomb)));
    const grown = process.memoryUsage().rss - before;
    console.log(
      `[registry] eight bomb publishes: statuses ${answers.map((a) => a.status).join(',')}, rss +${Math.round(grown / MIB)} MiB`,
    );
    for (const answer of answers) {
      if (answer.status === 503) {
        expect(answer.json).toMatchObject({ error: { code: 'PIECE_PUBLISH_BUSY' } });
        continue;
      }
      expect(answer).toMatchObject({
        status: 400,
        json: {
          error: {
            code: 'INVALID_PIECE',
            message: expect.stringMatching(/archive too large: past 1000 entries or 16777216 unpacked bytes/),
          },
        },
      });
    }
    expect(answers.filter((a) => a.status === 400).length).toBeGreaterThanOrEqual(
      config.PIECE_PUBLISH_CONCURRENCY,
    );
    // Streamed to disk and stopped at the cap: nowhere near 8 x 95 MiB in memory.
    expect(grown).toBeLessThan(100 * MIB);
  });
});

describe('the publish gate in front of the registry', () => {
  it('refuses a publish past PIECE_PUBLISH_CONCURRENCY and PIECE_PUBLISH_MAX_QUEUED with PIECE_PUBLISH_BUSY, storing nothing', async () => {
    const config = await testAppConfig();
    const pool = createPool(config.DATABASE_URL, 2);
    const storage = storageOf(config);
    const gate = new PublishGate({ concurrency: 1, maxQueued: 0 });
    let release = () => {};
    const held = gate.run(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      await migrate(pool, createLogger({ name: 'migrate', level: 'silent' }));
      await storage.ensureBucket();
      const pieces = createPiecesRepository(pool);
      const registry = new PieceRegistry({
        pieces,
        storage,
        maxArchiveBytes: MIB,
        maxUnpackedBytes: MIB,
        gate,
        reservedNames: new Set(),
        loadCheck: () => loadCheckIsolation('SANDBOXED'),
      });
      const body = goodPiece({ name: 'queued', version: '1.0.0' });
      const input = { manifest: body.manifest, archive: Buffer.from(body.archive, 'base64') };
      await expect(registry.publish(input)).rejects.toMatchObject({
        code: 'PIECE_PUBLISH_BUSY',
        message: expect.stringMatching(/1 publishes are being checked and 0 wait/),
      });
      expect(await pieces.get('queued', '1.0.0')).toBeNull();
      release();
      await held;
      expect((await registry.publish(input)).created).toBe(true);
    } finally {
      release();
      storage.close();
      await pool.end();
    }
  });
});
