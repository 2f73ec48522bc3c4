import type { EngineJob, EnginePollJob } from '@flowbox/protocol';

/** A sandboxed engine's launch (sandbox/sandboxed-engine.ts) and its relay. */
export interface EngineSandbox {
  /** The command that ends by running node on the entry, inside the sandbox. */
  command: string;
  args: string[];
  /** File descriptors the command reads, passed after the IPC channel (fd 4 onwards). */
  extraFds: number[];
  /**
   * Shows the sandbox this job's bundle and pieces (and nothing else of the cache), lets its
   * traffic through the relay, and returns the job as the engine must see it.
   */
  admit(job: EngineJob): Promise<EngineJob>;
  /** As `admit`, for a poll: its bundle and pieces, and its fetches through the relay. */
  admitPoll(job: EnginePollJob): Promise<EnginePollJob>;
  /** Shows the sandbox these pieces, for a preload before any job. */
  expose(pieces: EngineJob['pieces']): Promise<void>;
  /** The job is over: its traffic is refused (its files stay until the next job is admitted). */
  release(): Promise<void>;
  /** The run's log upload, which may outlast its job, ended: its relay path is refused. */
  endUpload(runId: string): void;
  /** The engine has exited: close the relay, remove what the launch made. */
  dispose(): Promise<void>;
}
