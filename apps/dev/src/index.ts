export type { LogLine, ManagedProcess } from '@flowbox/local-services';
export { DEFAULT_RESTART_POLICY, type RestartPolicy } from './restart-policy.ts';
export {
  type RunningStack,
  type StackEntries,
  type StackOptions,
  type SupervisionOptions,
  startStack,
} from './stack.ts';
