import { randomBytes } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import type { AppConfig } from '../src/env.ts';
import { manage, startTestApp } from './app-harness.ts';
import { goodPiece, manifestOf, pieceSource, publishBody } from './piece-archives.ts';

interface PieceVersionAnswer {
  piece: {
    name: string;
    version: string;
    sha256: string;
    sizeBytes: number;
    publishedAt: string;
    actions: Array<{
      name: string;
      description: string;
      inputSchema: Record<string, unknown>;
      auth?: unknown;
    }>;
    nodeBuiltins: string[] | null;
    isolate: { supported: boolean; reason?: string };
  };
}

/**
 * Small enough that an archive over it is quick to build, and over the 1 MiB webhook body
 * limit: the publish route has its own, so such an archive is read and refused naming the cap.
 */
const MAX_ARCHIVE_BYTES = 2 * 1024 * 1024;

describe('the piece registry (POST/GET /v1/pieces)', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;

  beforeAll(async () => {
    ({ app, url, config } = await startTestApp({ PIECE_ARCHIVE_MAX_BYTES: String(MAX_ARCHIVE_BYTES) }));
  });
  afterAll(async () => {
    await app.close();
  });

  const publish = async (body: unknown) => {
    const response = await manage(url, 'POST', '/v1/pieces', body);
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  async function archiveKeys(): Promise<string[]> {
    const s3 = new S3Client({
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY },
    });
    try {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: config.S3_BUCKET, Prefix: 'pieces/' }));
      return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
    } finally {
      s3.destroy();
    }
  }

  it('publishes the built-in pieces at start, as registry entries', async () => {
    const listed = (await (await manage(url, 'GET', '/v1/pieces')).json()) as {
      pieces: Array<{ name: string; latest: string; versions: string[] }>;
    };
    expect(listed.pieces.map((p) => p.name)).toEqual(['http', 'math-helper', 'schedule', 'webhook']);
    const math = (await (await manage(url, 'GET', '/v1/pieces/math-helper')).json()) as {
      versions: PieceVersionAnswer['piece'][];
    };
    expect(math.versions[0]).toMatchObject({
      actions: [
        {
          name: 'addition_math',
          inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        },
      ],
      isolate: { supported: true },
    });
  });

  it('publishes a piece (201), takes the same content again (200) and refuses other content (409)', async () => {
    const before = await archiveKeys();
    const body = goodPiece({ name: 'greeter', version: '1.0.0' });
    const started = performance.now();
    const created = await publish(body);
    const publishMs = performance.now() - started;
    expect(created.status).toBe(201);
    const { piece } = created.json as unknown as PieceVersionAnswer;
    expect(piece).toMatchObject({
      name: 'greeter',
      version: '1.0.0',
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      nodeBuiltins: [],
      isolate: { supported: true },
      actions: [
        {
          name: 'greet',
          description: 'Greets someone.',
          inputSchema: {
            type: 'object',
            required: ['who'],
            properties: { who: { type: 'string', minLength: 1 } },
          },
        },
      ],
    });
    expect(await archiveKeys()).toEqual([...before, `pieces/greeter/1.0.0/${piece.sha256}.tgz`].sort());

    const againStarted = performance.now();
    const again = await publish(body);
    const republishMs = performance.now() - againStarted;
    expect(again).toEqual({ status: 200, json: created.json });
    console.log(
      `[registry] publish: ${JSON.stringify({ publishMs: Math.round(publishMs), republishMs: Math.round(republishMs) })}`,
    );

    const changed = await publish(goodPiece({ name: 'greeter', version: '1.0.0' }, { greeting: 'hi' }));
    expect(changed.status).toBe(409);
    expect(changed.json).toMatchObject({
      error: {
        code: 'PIECE_VERSION_EXISTS',
        message: expect.stringContaining('greeter@1.0.0 is already published'),
      },
    });
    expect(await archiveKeys()).toEqual([...before, `pieces/greeter/1.0.0/${piece.sha256}.tgz`].sort());

    const detail = (await (await manage(url, 'GET', '/v1/pieces/greeter')).json()) as {
      latest: string;
      versions: Array<{ sha256: string }>;
    };
    expect(detail).toMatchObject({ name: 'greeter', latest: '1.0.0', versions: [{ sha256: piece.sha256 }] });
    expect((await manage(url, 'GET', '/v1/pieces/nobody')).status).toBe(404);
  });

  it("publishes the credential each action declares, its own or its piece's", async () => {
    const source = [
      "import { createAction, createPiece, PieceAuth, Property } from '@flowbox/pieces-framework';",
      'export default createPiece({',
      "  name: 'locked', version: '1.0.0', auth: PieceAuth.BasicAuth({ displayName: 'Login' }),",
      '  actions: [',
      "    createAction({ name: 'greet', description: '', props: {}, run: () => 1 }),",
      "    createAction({ name: 'token', description: '', props: {}, run: () => 2,",
      "      auth: PieceAuth.CustomAuth({ displayName: 'Account', required: false,",
      "        props: { host: Property.ShortText({ displayName: 'Host', required: true }) } }) }),",
      '  ],',
      '});',
    ].join('\n');
    const piece = { name: 'locked', version: '1.0.0', actions: ['greet', 'token'] };
    const created = await publish(publishBody(piece, [{ name: 'index.mjs', data: source }]));
    expect(created.status).toBe(201);
    const { actions } = (created.json as unknown as PieceVersionAnswer).piece;
    expect(actions.map((action) => action.auth)).toEqual([
      {
        type: 'BASIC_AUTH',
        displayName: 'Login',
        required: true,
        schema: {
          type: 'object',
          properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string' } },
          required: ['username', 'password'],
          additionalProperties: false,
        },
      },
      {
        type: 'CUSTOM_AUTH',
        displayName: 'Account',
        required: false,
        schema: {
          type: 'object',
          properties: { host: { type: 'string', title: 'Host' } },
          required: ['host'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('records the Node built-ins a piece imports: it cannot run in an isolate', async () => {
    const piece = { name: 'disk-reader', version: '0.1.0' };
    const body = goodPiece(piece, {
      prelude:
        "import { readFileSync } from 'node:fs';\nimport net from 'net';\nvoid readFileSync; void net;",
    });
    const created = await publish(body);
    expect(created.status).toBe(201);
    expect((created.json as unknown as PieceVersionAnswer).piece).toMatchObject({
      nodeBuiltins: ['fs', 'net'],
      isolate: { supported: false, reason: 'imports node:fs, node:net' },
    });
  });

  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'a manifest that fails its schema',
      () => publishBody(PIECE, [MODULE], { ...manifestOf(PIECE), entry: 'main.js' }),
      /^manifest: entry: /,
    ],
    ['an archive that is not base64', () => ({ manifest: manifestOf(PIECE), archive: '%%%' }), /^archive: /],
    [
      'an archive that is not gzip',
      () => ({ manifest: manifestOf(PIECE), archive: Buffer.from('plain text').toString('base64') }),
      /archive is not gzip/,
    ],
    [
      'a path with ..',
      () => publishBody(PIECE, [MODULE, { name: '../escape.mjs', data: 'x' }]),
      /"\.\.\/escape\.mjs" \(path contains '\.\.'\)/,
    ],
    [
      'an absolute path',
      () => publishBody(PIECE, [MODULE, { name: '/etc/cron.d/x', data: 'x' }]),
      /absolute path/,
    ],
    [
      'a symbolic link out of its root',
      () => publishBody(PIECE, [MODULE, { name: 'passwd', type: '2', linkname: '/etc/passwd' }]),
      /"passwd" \(a symbolic link; only regular files and directories/,
    ],
    [
      'a hard link',
      () => publishBody(PIECE, [MODULE, { name: 'shadow', type: '1', linkname: '../../etc/shadow' }]),
      /"shadow" \(a hard link;/,
    ],
    [
      'a device file',
      () => publishBody(PIECE, [MODULE, { name: 'null', type: '3' }]),
      /"null" \(a character device;/,
    ],
    [
      'an archive over PIECE_ARCHIVE_MAX_BYTES',
      () => publishBody(PIECE, [MODULE, { name: 'noise.bin', data: randomBytes(MAX_ARCHIVE_BYTES + 1024) }]),
      /over the 2097152-byte cap \(PIECE_ARCHIVE_MAX_BYTES\)/,
    ],
    [
      'a missing entry',
      () => publishBody(PIECE, [{ name: 'other.mjs', data: 'export default 1;' }]),
      /entry index\.mjs is not in the archive/,
    ],
    [
      'a module that throws at load',
      () => goodPiece(PIECE, { prelude: "throw new TypeError('no config at load');" }),
      /throws at load: TypeError: no config at load/,
    ],
    [
      'a module with top-level await',
      () => goodPiece(PIECE, { prelude: 'await Promise.resolve();' }),
      /top-level await/,
    ],
    [
      'a module whose default export is not a piece',
      () => publishBody(PIECE, [{ name: 'index.mjs', data: 'export default { hello: 1 };' }]),
      /default export is not a piece/,
    ],
    [
      'a module that exits its process at load',
      () => goodPiece(PIECE, { prelude: 'process.exit(7);' }),
      /without loading/,
    ],
    [
      "a module whose piece is not the manifest's",
      () =>
        publishBody(PIECE, [{ name: 'index.mjs', data: pieceSource({ name: 'other', version: '1.0.0' }) }]),
      /the module's piece is other@1\.0\.0/,
    ],
    [
      'a module that opens a connection at load',
      () => goodPiece(PIECE, { prelude: "process.getBuiltinModule('node:net').connect(9, '127.0.0.1');" }),
      /throws at load: Error: network access is refused while a piece loads/,
    ],
    [
      'a module that prints a report of its own and exits',
      () =>
        goodPiece(PIECE, {
          prelude:
            "console.log(JSON.stringify({ version: 1, type: 'loaded', nonce: 'guess', piece: { name: 'bad-piece', version: '1.0.0' }, actions: [{ name: 'greet', description: '', inputSchema: {} }], triggers: [], nodeBuiltins: [] }));\nprocess.exit(0);",
        }),
      /ended its loading process \(exit 0\) without loading/,
    ],
    [
      'a module that writes a file at load (it sees no environment either)',
      () =>
        goodPiece(PIECE, {
          prelude:
            "if (Object.keys(process.env).length > 0) throw new Error('env: ' + Object.keys(process.env).join());\n" +
            "process.getBuiltinModule('node:fs').writeFileSync('/tmp/flowbox-piece-wrote', 'x');",
        }),
      /throws at load: Error: Access to this API has been restricted/,
    ],
  ];

  it.each(cases)(
    'refuses %s with a 400 naming the problem, storing nothing',
    async (_name, body, message) => {
      const before = await archiveKeys();
      const answer = await publish(body());
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({
        error: { code: 'INVALID_PIECE', message: expect.stringMatching(message) },
      });
      expect((await manage(url, 'GET', `/v1/pieces/${PIECE.name}`)).status).toBe(404);
      expect(await archiveKeys()).toEqual(before);
    },
  );

  it('refuses a module that never finishes loading, after its deadline', async () => {
    const answer = await publish(goodPiece(PIECE, { prelude: 'for (;;) {}' }));
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({
      error: { code: 'INVALID_PIECE', message: expect.stringMatching(/did not finish loading within 10 s/) },
    });
    expect((await manage(url, 'GET', `/v1/pieces/${PIECE.name}`)).status).toBe(404);
  });

  it('refuses a flow pinning a version that is not published, at push', async () => {
    const pinned = structuredClone(BENCHMARK_FLOW);
    Object.assign(pinned.steps[0] as object, { version: '9.9.9' });
    const refused = await manage(url, 'POST', '/v1/flows', { name: 'pinned', definition: pinned });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringMatching(
          /^definition\.steps\.0\.version: piece 'math-helper' has no published version '9\.9\.9' \(published: 0\.1\.0\)$/,
        ),
      },
    });
    const unknown = structuredClone(BENCHMARK_FLOW);
    Object.assign(unknown.steps[0] as object, { piece: 'no-such-piece' });
    const answer = await manage(url, 'POST', '/v1/flows', { name: 'unknown', definition: unknown });
    expect(answer.status).toBe(400);
  });

  it('pins the version a flow names in its bundle, and the latest when it names none', async () => {
    await publish(goodPiece({ name: 'greeter', version: '1.1.0' }, { greeting: 'hey' }));
    const flow = (version?: string) => ({
      trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
      steps: [
        {
          type: 'piece',
          name: 'greet',
          piece: 'greeter',
          action: 'greet',
          input: { who: 'x' },
          ...(version ? { version } : {}),
        },
      ],
    });
    const pinned = await manage(url, 'POST', '/v1/flows', {
      name: 'old',
      definition: flow('1.0.0'),
      publish: true,
    });
    expect(pinned.status).toBe(201);
    const latest = await manage(url, 'POST', '/v1/flows', { name: 'new', definition: flow(), publish: true });
    const pieceOf = async (response: Response) =>
      (
        (await response.json()) as {
          version: { bundle: { pieces: Array<{ name: string; version: string }> } };
        }
      ).version.bundle.pieces.find((p) => p.name === 'greeter');
    expect(await pieceOf(pinned)).toEqual({ name: 'greeter', version: '1.0.0' });
    expect(await pieceOf(latest)).toEqual({ name: 'greeter', version: '1.1.0' });
  });
});

const PIECE = { name: 'bad-piece', version: '1.0.0' };
const MODULE = { name: 'index.mjs', data: pieceSource(PIECE) };
