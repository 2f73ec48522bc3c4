import type { Api } from './api.ts';
import { h, show } from './dom.ts';

/**
 * Asks for the API key and checks it with one call before keeping it. The page itself is code
 * only; every piece of data comes from the API with the key.
 */
export function keyForm(main: HTMLElement, api: Api, message: string | null, onAccepted: () => void): void {
  const input = h('input', {
    type: 'password',
    name: 'apiKey',
    autocomplete: 'off',
    required: true,
    'aria-label': 'API key',
    placeholder: 'API key',
  });
  const note = h('p', { class: 'form-error', role: 'alert' }, message ?? '');
  const submit = async (event: Event) => {
    event.preventDefault();
    api.key = input.value.trim();
    try {
      await api.flows();
      onAccepted();
    } catch (error) {
      api.key = null;
      note.textContent = error instanceof Error ? error.message : String(error);
    }
  };
  show(
    main,
    h(
      'form',
      { class: 'key-form', onsubmit: (event: Event) => void submit(event) },
      h('h1', {}, 'Run inspector'),
      h(
        'p',
        {},
        'Enter the API key (the one `pnpm dev` prints, or API_KEY). It stays in this tab until you close it.',
      ),
      input,
      h('button', { type: 'submit' }, 'Open'),
      note,
    ),
  );
  input.focus();
}
