import { Api, ApiError, Unauthorized } from './api.ts';
import { connectionsView } from './connections-view.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h } from './dom.ts';
import { flowPage } from './flow-page.ts';
import { flowsView } from './flows-view.ts';
import { keyForm } from './key-form.ts';
import { piecesView, pieceView } from './pieces-view.ts';
import { runView } from './run-view.ts';
import { runsView } from './runs-view.ts';

/**
 * The run inspector: a hash router over its views (#/runs, #/runs/<id>, #/flows, #/flows/<id>,
 * #/connections, #/pieces, #/pieces/<name>). Each view
 * returns how to stop it (its pollers), called before the next one is drawn.
 */
function start(): void {
  const main = document.getElementById('main') as HTMLElement;
  const signOut = document.getElementById('sign-out') as HTMLButtonElement;
  const api = new Api(sessionStorage);
  let dispose: Dispose = () => {};
  let notice: HTMLElement | null = null;

  const askForKey = (message: string | null) => {
    dispose();
    dispose = () => {};
    api.key = null;
    signOut.hidden = true;
    keyForm(main, api, message, route);
  };
  const context: ViewContext = {
    api,
    main,
    fail(error) {
      if (error instanceof Unauthorized) {
        askForKey(api.key === null ? null : error.message);
        return;
      }
      const text =
        error instanceof ApiError
          ? `${error.code}: ${error.message}`
          : `Could not reach the app: ${String(error)}`;
      notice?.remove();
      notice = h('p', { class: 'notice', role: 'status' }, text);
      main.prepend(notice);
    },
    recovered() {
      notice?.remove();
      notice = null;
    },
  };

  function route(): void {
    dispose();
    dispose = () => {};
    notice = null;
    if (api.key === null) {
      askForKey(null);
      return;
    }
    signOut.hidden = false;
    const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?');
    const runMatch = /^\/runs\/([0-9a-f-]{36})$/i.exec(path);
    const named = (prefix: string) => {
      const match = new RegExp(`^/${prefix}/([^/]+)$`).exec(path);
      return match?.[1] === undefined ? null : decodeURIComponent(match[1]);
    };
    const flowId = named('flows');
    const pieceName = named('pieces');
    for (const link of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
      link.classList.toggle('active', path.startsWith(`/${link.dataset.nav}`));
    }
    if (runMatch?.[1] !== undefined) dispose = runView(context, runMatch[1]);
    else if (path === '/flows') dispose = flowsView(context);
    else if (flowId !== null) dispose = flowPage(context, flowId);
    else if (path === '/connections') dispose = connectionsView(context);
    else if (path === '/pieces') dispose = piecesView(context);
    else if (pieceName !== null) dispose = pieceView(context, pieceName);
    else dispose = runsView(context, new URLSearchParams(query));
  }

  signOut.addEventListener('click', () => askForKey(null));
  window.addEventListener('hashchange', route);
  route();
}

start();
