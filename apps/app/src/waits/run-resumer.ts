/**
 * What a wait's answer and a child's end need of the run lifecycle: resume a PAUSED run. Exactly
 * once whoever calls it (one conditional update); a run in any other state is left alone, and a
 * run still running finds the answer kept when it pauses.
 */
export interface RunResumer {
  resume(runId: string, options?: { syncInstanceId?: string }): Promise<unknown>;
}
