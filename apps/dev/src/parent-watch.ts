/**
 * Calls `onGone` once when this process's parent has died. Node has no PR_SET_PDEATHSIG, and
 * pnpm gives its script no pipe whose end would say so (stdin is the terminal), so this looks
 * at `process.ppid`, which Node reads from the kernel at each call: it changes only when the
 * parent dies and the process is reparented (to init or a subreaper), whatever killed the
 * parent, SIGKILL included. The check costs one getppid() per `intervalMs`.
 */
export function watchParent(onGone: () => void, intervalMs = 250): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  // The watch alone never keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
