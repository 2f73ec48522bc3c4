import { describe, expect, it } from 'vitest';
import { engineCpuProfFlags, engineCpuProfName } from './engine-cpu-prof.ts';

describe('engine CPU profile names (ENGINE_CPU_PROF_DIR)', () => {
  it('give every engine of a worker its own profile file in the directory', () => {
    const next = engineCpuProfFlags('/prof/engine', 'host-1', 'a1b2c3d4');
    expect(next()).toEqual([
      '--cpu-prof',
      '--cpu-prof-dir=/prof/engine',
      '--cpu-prof-name=engine.host-1.a1b2c3d4.1.cpuprofile',
    ]);
    expect(next()[2]).toBe('--cpu-prof-name=engine.host-1.a1b2c3d4.2.cpuprofile');
  });

  it('differ between workers, and between two processes of one worker id', () => {
    const names = [
      engineCpuProfFlags('/d', 'w-1')()[2],
      engineCpuProfFlags('/d', 'w-2')()[2],
      engineCpuProfFlags('/d', 'w-1')()[2],
    ];
    expect(new Set(names).size).toBe(3);
  });

  it('keep a worker id that could name another path inside the file name', () => {
    expect(engineCpuProfName('../x/y z', 't', 3)).toBe('engine.___x_y_z.t.3.cpuprofile');
  });
});
