/**
 * The seccomp program bubblewrap installs on a sandbox (`bwrap --seccomp FD`: a sandboxed
 * engine, a piece's load check): the process may start threads but no process. `clone` without CLONE_THREAD, `fork` and `vfork`
 * fail with EPERM; `clone3` fails with ENOSYS, which makes libc fall back to `clone`, where the
 * flags can be read (clone3 passes them in memory, out of a filter's reach). Everything else is
 * allowed: the namespaces, the read-only mounts and the limits do the rest.
 *
 * A process limit (RLIMIT_NPROC) cannot do this for a process running as root, since the kernel
 * does not count root's processes against it; a filter holds for any user.
 *
 * Classic BPF over `struct seccomp_data` { int nr; u32 arch; u64 ip; u64 args[6] }, as
 * libseccomp's `seccomp_export_bpf` would write it: 8-byte instructions, host byte order.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff_0000;
const SECCOMP_RET_ERRNO = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS = 0x8000_0000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_THREAD = 0x0001_0000;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[0] on a little-endian machine: clone's flags. */
const OFFSET_ARG0_LOW = 16;

interface Architecture {
  audit: number;
  clone: number;
  clone3: number;
  /** Syscalls that always create a process (none on arm64, which has only clone). */
  forks: number[];
  /** x32 syscalls carry x86-64's audit arch with this bit set in their number: refused. */
  x32Bit?: number;
}

const ARCHITECTURES: Record<string, Architecture> = {
  x64: { audit: 0xc000_003e, clone: 56, clone3: 435, forks: [57, 58], x32Bit: 0x4000_0000 },
  arm64: { audit: 0xc000_00b7, clone: 220, clone3: 435, forks: [] },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The program for this machine's architecture, or null where flowbox has none. */
export function noNewProcessesFilter(arch: string = process.arch): Buffer | null {
  const target = ARCHITECTURES[arch];
  if (target === undefined) return null;
  const deny = SECCOMP_RET_ERRNO | EPERM;
  const program: Instruction[] = [
    [BPF_LD_W_ABS, 0, 0, OFFSET_ARCH],
    // Another architecture's syscall numbers mean other syscalls: refuse them all.
    [BPF_JMP_JEQ_K, 1, 0, target.audit],
    [BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS],
    [BPF_LD_W_ABS, 0, 0, OFFSET_NR],
  ];
  if (target.x32Bit !== undefined)
    program.push([BPF_JMP_JGE_K, 0, 1, target.x32Bit], [BPF_RET_K, 0, 0, deny]);
  for (const nr of target.forks) program.push([BPF_JMP_JEQ_K, 0, 1, nr], [BPF_RET_K, 0, 0, deny]);
  program.push(
    [BPF_JMP_JEQ_K, 0, 1, target.clone3],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS],
    [BPF_JMP_JEQ_K, 0, 3, target.clone],
    [BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW],
    // A thread shares its process: allowed. Anything else clone makes is a process.
    [BPF_JMP_JSET_K, 1, 0, CLONE_THREAD],
    [BPF_RET_K, 0, 0, deny],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
  );
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    const at = index * 8;
    bytes.writeUInt16LE(code, at);
    bytes.writeUInt8(jt, at + 2);
    bytes.writeUInt8(jf, at + 3);
    bytes.writeUInt32LE(k >>> 0, at + 4);
  });
  return bytes;
}
