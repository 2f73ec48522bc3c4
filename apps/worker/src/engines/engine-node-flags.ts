/**
 * V8 flags every engine starts with, sandboxed or not (after them come `--cpu-prof`'s, when set).
 *
 * `--max-semi-space-size=8`: V8 grows the young generation while many of its objects survive a
 * scavenge, up to 32 MB a semi-space on a machine this size, and never gives it back. Over 10,000
 * runs in one engine that is the engine's whole RSS growth (16 MB of new space at run 1,000, 32
 * MB by run 5,000, 64 MB by 15,000; the heap in use stays flat). Capped at 8 MB, RSS stays within
 * 10 % of the warm engine's and the CPU per run does not rise
 * (benchmark/results/2026-11-29-vm-isolate-memory-10k.md). The flag also bounds the young
 * generation of the run isolates, which isolated-vm makes in the same process.
 */
export const ENGINE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
