import { runtime } from './run-runtime.ts';
import { structuredClone } from './structured-clone.ts';
import { atob, btoa, IsolateTextDecoder, IsolateTextEncoder } from './text-codecs.ts';
import { IsolateURL, IsolateURLSearchParams } from './url.ts';
import { crypto } from './web-crypto.ts';

/**
 * The script a run's isolate starts from (built into the engine, isolate-framework.ts; the
 * first script of every isolate snapshot): the web globals pieces expect, the run runtime as
 * `__flowbox`, and nothing of Node (no parser either: the engine validates pieces' inputs). What V8 would allocate outside the memory limit goes, as
 * for code steps (code-step-script.ts).
 */
const target = globalThis as Record<string, unknown>;
const globals: Record<string, unknown> = {
  TextEncoder: IsolateTextEncoder,
  TextDecoder: IsolateTextDecoder,
  URL: IsolateURL,
  URLSearchParams: IsolateURLSearchParams,
  atob,
  btoa,
  structuredClone,
  crypto,
  __flowbox: runtime,
};
Object.assign(target, globals);
// Not enumerable, as Node's and browsers' own globals are:
// `Object.keys(globalThis)` shows a run only what the run (or the step API) put there.
for (const name of Object.keys(target)) {
  Object.defineProperty(target, name, { enumerable: false });
}
delete target.WebAssembly;
Reflect.deleteProperty(ArrayBuffer.prototype, 'resize');
// No SharedArrayBuffer in a snapshot's context; where there is one, it cannot grow.
if (typeof target.SharedArrayBuffer === 'function')
  Reflect.deleteProperty(SharedArrayBuffer.prototype, 'grow');
Object.defineProperty(ArrayBuffer.prototype, 'transfer', {
  value: ArrayBuffer.prototype.transferToFixedLength,
  writable: true,
  configurable: true,
});
