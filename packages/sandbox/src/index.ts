export {
  type BubblewrapOptions,
  bubblewrapArgs,
  type ReadOnlyBind,
  sandboxUnavailable,
  systemReadOnlyBinds,
} from './bubblewrap.ts';
export { noNewProcessesFilter } from './seccomp-filter.ts';
