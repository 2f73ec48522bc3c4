import { randomUUID } from 'node:crypto';

/**
 * ENGINE_CPU_PROF_DIR: the `--cpu-prof` flags of each engine a worker starts. Node names a profile
 * after the process's pid, which in a PID namespace of its own (ENGINE_PID_NAMESPACE) is the same
 * small number for every engine: profiles written in the same second would overwrite one another.
 * Each engine gets its own name instead: the worker's id, this worker process's random tag (a
 * restarted worker keeps its id) and the engine's sequence number, ending in `.cpuprofile` as the
 * benchmark's profile merger expects.
 */
export function engineCpuProfFlags(
  dir: string,
  workerId: string,
  tag = randomUUID().slice(0, 8),
): () => string[] {
  let started = 0;
  return () => {
    started += 1;
    return [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-name=${engineCpuProfName(workerId, tag, started)}`,
    ];
  };
}

/** `engine.<workerId>.<tag>.<n>.cpuprofile`, with anything but letters, digits, `_` and `-` of the id made `_`. */
export function engineCpuProfName(workerId: string, tag: string, sequence: number): string {
  return `engine.${workerId.replaceAll(/[^A-Za-z0-9_-]/g, '_')}.${tag}.${sequence}.cpuprofile`;
}
