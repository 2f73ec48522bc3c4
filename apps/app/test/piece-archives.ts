import { gzipSync } from 'node:zlib';

/**
 * Tiny piece archives for the registry's tests, good and bad: a hand-written tar, since the
 * bad ones (`..`, absolute paths, links, devices) are what real tar writers refuse to make.
 */
export interface RawEntry {
  name: string;
  data?: string | Buffer;
  /** Tar type flag: '0' file (default), '2' symlink, '3' character device, ... */
  type?: string;
  linkname?: string;
}

/** One pax record, `<length> <key>=<value>\n`, its length counting itself. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = body.length + 2;
  if (`${length}${body}`.length !== length) length += 1;
  return `${length}${body}`;
}

/** `end: false` leaves out the two zero blocks, `gzip: false` the gzip: to embed one tar in another. */
export function tarGz(entries: readonly RawEntry[], options: { end?: boolean; gzip?: boolean } = {}): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100, 'utf8');
    header.write('0000644\0', 100, 8, 'ascii');
    header.write('0000000\0', 108, 8, 'ascii');
    header.write('0000000\0', 116, 8, 'ascii');
    header.write(`${data.byteLength.toString(8).padStart(11, '0')}\0`, 124, 12, 'ascii');
    header.write('00000000000\0', 136, 12, 'ascii');
    header.write('        ', 148, 8, 'ascii');
    header.write(entry.type ?? '0', 156, 1, 'ascii');
    if (entry.linkname !== undefined) header.write(entry.linkname, 157, 100, 'utf8');
    header.write('ustar\u000000', 257, 8, 'ascii');
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
    blocks.push(header, data, Buffer.alloc((512 - (data.byteLength % 512)) % 512));
  }
  if (options.end !== false) blocks.push(Buffer.alloc(1024));
  return options.gzip === false ? Buffer.concat(blocks) : gzipSync(Buffer.concat(blocks));
}

export interface TestPiece {
  name: string;
  version: string;
  actions?: string[];
}

export function manifestOf(piece: TestPiece) {
  return {
    name: piece.name,
    version: piece.version,
    entry: 'index.mjs' as const,
    actions: piece.actions ?? ['greet'],
    triggers: [],
  };
}

/** A piece module with one action `greet` ({ who } → `<greeting> <who>`), plus optional code before it. */
export function pieceSource(piece: TestPiece, options: { greeting?: string; prelude?: string } = {}): string {
  return [
    "import { createAction, createPiece, Property } from '@flowbox/pieces-framework';",
    options.prelude ?? '',
    'export default createPiece({',
    `  name: ${JSON.stringify(piece.name)}, version: ${JSON.stringify(piece.version)},`,
    '  actions: [createAction({',
    "    name: 'greet', description: 'Greets someone.',",
    "    props: { who: Property.ShortText({ displayName: 'Who', required: true, minLength: 1 }) },",
    `    run: (input) => ({ text: ${JSON.stringify(options.greeting ?? 'hello')} + ' ' + input.who }),`,
    '  })],',
    '});',
  ].join('\n');
}

/** The `POST /v1/pieces` body of a piece whose archive holds `files` (manifest.json added). */
export function publishBody(piece: TestPiece, files: RawEntry[], manifest: unknown = manifestOf(piece)) {
  const archive = tarGz([...files, { name: 'manifest.json', data: JSON.stringify(manifestOf(piece)) }]);
  return { manifest, archive: archive.toString('base64') };
}

/** A good piece: its module and manifest. */
export function goodPiece(piece: TestPiece, options: { greeting?: string; prelude?: string } = {}) {
  return publishBody(piece, [{ name: 'index.mjs', data: pieceSource(piece, options) }]);
}
