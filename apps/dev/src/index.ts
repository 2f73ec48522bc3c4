export { type LogLine, type ManagedProcess, startNodeProcess } from './managed-process.ts';
export { type RunningStack, type StackOptions, startStack } from './stack.ts';
