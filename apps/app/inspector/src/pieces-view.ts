import { ApiError } from './api.ts';
import type { PieceSummary, PieceVersion } from './api-types.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { time } from './format.ts';

/** The registry's pieces with their versions; each piece's page has its actions' inputs. */
export function piecesView(context: ViewContext): Dispose {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading pieces…'));
  show(context.main, h('div', { class: 'heading' }, h('h1', {}, 'Pieces')), list);
  void context.api
    .pieces()
    .then(({ pieces }) => {
      context.recovered();
      show(list, piecesTable(pieces));
    })
    .catch(context.fail);
  return () => {};
}

function piecesTable(pieces: PieceSummary[]): HTMLElement {
  return h(
    'table',
    { class: 'pieces' },
    h('thead', {}, h('tr', {}, ...['piece', 'latest', 'versions'].map((label) => h('th', {}, label)))),
    h(
      'tbody',
      {},
      ...pieces.map((piece) =>
        h(
          'tr',
          { 'data-piece': piece.name },
          h(
            'td',
            { class: 'mono' },
            h('a', { href: `#/pieces/${encodeURIComponent(piece.name)}` }, piece.name),
          ),
          h('td', { class: 'mono' }, piece.latest === '' ? 'every version yanked' : piece.latest),
          h('td', { class: 'mono' }, piece.versions.join(', ')),
        ),
      ),
    ),
  );
}

/** One piece: each version (newest first, the latest open) with its actions and their input schemas. */
export function pieceView(context: ViewContext, name: string): Dispose {
  show(context.main, h('p', { class: 'muted' }, `Loading piece ${name}…`));
  void context.api
    .piece(name)
    .then((piece) => {
      context.recovered();
      show(
        context.main,
        h('p', { class: 'crumbs' }, h('a', { href: '#/pieces' }, 'Pieces')),
        h('div', { class: 'heading' }, h('h1', { class: 'mono' }, piece.name)),
        h(
          'div',
          {},
          ...[...piece.versions].reverse().map((version) => versionDetails(version, piece.latest)),
        ),
      );
    })
    .catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) {
        show(
          context.main,
          h('p', { class: 'notice' }, `No piece ${name}.`),
          h('a', { href: '#/pieces' }, 'All pieces'),
        );
        return;
      }
      context.fail(error);
    });
  return () => {};
}

function versionDetails(version: PieceVersion, latest: string): HTMLElement {
  return h(
    'details',
    { class: 'piece-version', 'data-piece-version': version.version, open: version.version === latest },
    h(
      'summary',
      {},
      h('strong', { class: 'mono' }, version.version),
      version.version === latest ? h('span', { class: 'badge enabled' }, 'latest') : null,
      version.yankedAt === null
        ? null
        : h('span', { class: 'badge disabled' }, `yanked ${time(version.yankedAt)}`),
      h(
        'span',
        { class: 'muted' },
        ` published ${time(version.publishedAt)}; ${version.isolate.supported ? 'runs in an isolate' : `needs a process: ${version.isolate.reason ?? ''}`}`,
      ),
    ),
    version.triggers.length === 0
      ? null
      : h('p', { class: 'mono muted' }, `triggers: ${version.triggers.join(', ')}`),
    ...version.actions.map((action) =>
      h(
        'article',
        { class: 'step', 'data-action': action.name },
        h(
          'header',
          {},
          h('strong', { class: 'mono' }, action.name),
          h('span', { class: 'muted' }, action.description),
        ),
        inputFields(action.inputSchema),
        h(
          'details',
          {},
          h('summary', {}, 'input schema (JSON Schema)'),
          h('pre', { class: 'json' }, JSON.stringify(action.inputSchema, null, 2)),
        ),
      ),
    ),
  );
}

/** The schema's top-level fields: name, type, required, description. */
function inputFields(schema: Record<string, unknown>): HTMLElement {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; description?: unknown }>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const names = Object.keys(properties);
  if (names.length === 0) return h('p', { class: 'muted' }, 'No input fields.');
  return h(
    'table',
    { class: 'inner', 'data-testid': 'input-fields' },
    h('thead', {}, h('tr', {}, ...['field', 'type', '', 'description'].map((label) => h('th', {}, label)))),
    h(
      'tbody',
      {},
      ...names.map((field) => {
        const property = properties[field] ?? {};
        const type = Array.isArray(property.type)
          ? property.type.join(' | ')
          : String(property.type ?? 'any');
        return h(
          'tr',
          { 'data-field': field },
          h('td', { class: 'mono' }, field),
          h('td', { class: 'mono' }, type),
          h('td', { class: 'muted' }, required.has(field) ? 'required' : 'optional'),
          h('td', {}, typeof property.description === 'string' ? property.description : ''),
        );
      }),
    ),
  );
}
