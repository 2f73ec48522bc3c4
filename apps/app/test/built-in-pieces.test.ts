import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@flowbox/node-kit';
import { describe, expect, it } from 'vitest';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import type { AppConfig } from '../src/env.ts';
import { builtInPieceNames, publishBuiltInPieces } from '../src/pieces/built-in-pieces.ts';
import { loadCheckIsolation } from '../src/pieces/piece-load-sandbox.ts';
import { PieceRegistry } from '../src/pieces/piece-registry.ts';
import { createPiecesRepository } from '../src/pieces/pieces-repository.ts';
import { PublishGate } from '../src/pieces/publish-gate.ts';
import { ObjectStorage } from '../src/storage/object-storage.ts';
import { manage, testAppConfig } from './app-harness.ts';
import { goodPiece } from './piece-archives.ts';

const MAX_ARCHIVE_BYTES = 2 * 1024 * 1024;

function storageOf(config: AppConfig): ObjectStorage {
  return new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
}

describe('built-in pieces published by apps starting at once', () => {
  it('start both, with one registry entry per built-in piece', async () => {
    const config = await testAppConfig();
    const logger = createLogger({ name: 'app', level: 'silent' });
    const apps = await Promise.all([createApp(config, logger), createApp(config, logger)]);
    try {
      const urls = await Promise.all(apps.map((one) => startApp(one, { seedBenchmarkFlow: false })));
      const listed = (await (await manage(urls[1] ?? '', 'GET', '/v1/pieces')).json()) as {
        pieces: Array<{ name: string; versions: string[] }>;
      };
      expect(listed.pieces.map((p) => [p.name, p.versions.length])).toEqual([
        ['http', 1],
        ['math-helper', 1],
        ['schedule', 1],
        ['webhook', 1],
      ]);
    } finally {
      await Promise.all(apps.map((one) => one.close()));
    }
  });
});

describe('an app whose built-in piece version the registry holds with other content', () => {
  it('starts, logging which, and the registry content stands', async () => {
    const config = await testAppConfig();
    const pool = createPool(config.DATABASE_URL, 2);
    const storage = storageOf(config);
    const lines: string[] = [];
    const logs = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).trim().split('\n'));
        done();
      },
    });
    let app: FlowboxApp | undefined;
    try {
      await migrate(pool, createLogger({ name: 'migrate', level: 'silent' }));
      await storage.ensureBucket();
      // Published under the built-in's name before names were reserved: no reserved names here.
      const squatter = new PieceRegistry({
        pieces: createPiecesRepository(pool),
        storage,
        maxArchiveBytes: MAX_ARCHIVE_BYTES,
        maxUnpackedBytes: MAX_ARCHIVE_BYTES,
        gate: new PublishGate({ concurrency: 1, maxQueued: 0 }),
        reservedNames: new Set(),
        loadCheck: () => loadCheckIsolation('SANDBOXED'),
      });
      const builtIn = JSON.parse(
        await readFile(
          join(import.meta.dirname, '..', '..', '..', 'packages', 'piece-http', 'dist', 'manifest.json'),
          'utf8',
        ),
      ) as { version: string };
      const body = goodPiece({ name: 'http', version: builtIn.version, actions: ['greet'] });
      const squat = await squatter.publish({
        manifest: body.manifest,
        archive: Buffer.from(body.archive, 'base64'),
      });
      expect(squat.created).toBe(true);

      app = await createApp(config, createLogger({ name: 'app', level: 'info' }, logs));
      const url = await startApp(app, { seedBenchmarkFlow: false });
      const http = (await (await manage(url, 'GET', '/v1/pieces/http')).json()) as {
        versions: Array<{ sha256: string }>;
      };
      expect(http.versions.map((v) => v.sha256)).toEqual([squat.piece.sha256]);
      const conflict = lines
        .map((line) => JSON.parse(line) as { level: number; piece?: string; err?: string; msg: string })
        .find((line) => line.piece === `http@${builtIn.version}`);
      expect(conflict).toMatchObject({
        level: 50,
        msg: expect.stringContaining('a built-in piece version is in the registry with other content'),
        err: expect.stringMatching(/already published with other content .*Yank it/),
      });
    } finally {
      await app?.close();
      storage.close();
      await pool.end();
    }
  });
});

describe('the built-in pieces', () => {
  it('are the packages whose package.json says flowbox.piece; one changed without a new version is a conflict, not a failed start', async () => {
    const config = await testAppConfig();
    const pool = createPool(config.DATABASE_URL, 2);
    const storage = storageOf(config);
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-built-ins-'));
    try {
      await migrate(pool, createLogger({ name: 'migrate', level: 'silent' }));
      await storage.ensureBucket();
      const registry = new PieceRegistry({
        pieces: createPiecesRepository(pool),
        storage,
        maxArchiveBytes: MAX_ARCHIVE_BYTES,
        maxUnpackedBytes: MAX_ARCHIVE_BYTES,
        gate: new PublishGate({ concurrency: 1, maxQueued: 0 }),
        reservedNames: await builtInPieceNames(dir),
        loadCheck: () => loadCheckIsolation('SANDBOXED'),
      });
      const writePackage = async (name: string, pkg: object, greeting?: string) => {
        await mkdir(join(dir, name, 'dist'), { recursive: true });
        await writeFile(join(dir, name, 'package.json'), JSON.stringify(pkg));
        const body = goodPiece({ name: 'greeter', version: '1.0.0' }, { greeting });
        await writeFile(join(dir, name, 'dist', 'manifest.json'), JSON.stringify(body.manifest));
        await writeFile(join(dir, name, 'dist', 'piece.tgz'), Buffer.from(body.archive, 'base64'));
      };
      await writePackage('piece-greeter', {
        name: '@x/piece-greeter',
        flowbox: { piece: { name: 'greeter' } },
      });
      await writePackage('not-a-piece', { name: '@x/helpers' }, 'ignored');
      expect([...(await builtInPieceNames(dir))]).toEqual(['greeter']);
      const { published } = await publishBuiltInPieces(registry, dir);
      expect(published.map(({ piece, created }) => [piece.name, piece.version, created])).toEqual([
        ['greeter', '1.0.0', true],
      ]);
      expect((await publishBuiltInPieces(registry, dir)).published.map(({ created }) => created)).toEqual([
        false,
      ]);

      await writePackage(
        'piece-greeter',
        { name: '@x/piece-greeter', flowbox: { piece: { name: 'greeter' } } },
        'hi',
      );
      const changed = await publishBuiltInPieces(registry, dir);
      expect(changed.published).toEqual([]);
      expect(changed.conflicts).toEqual([
        {
          piece: 'greeter@1.0.0',
          packageDir: join(dir, 'piece-greeter'),
          message: expect.stringMatching(
            /^greeter@1\.0\.0 is already published with other content .*; flows get the registry's content\. .*give .*piece-greeter\/package\.json a new version$/,
          ),
        },
      ]);
    } finally {
      storage.close();
      await pool.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
