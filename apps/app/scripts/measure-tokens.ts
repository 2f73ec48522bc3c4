/**
 * Cost per call of the app's token work, the part of it on every run: signing an engine token
 * (once per dispatched job), verifying one the first time (its run's first callback) and again
 * (every later callback; a verifier may cache), and verifying a worker token (once per socket
 * connection). Each figure is the median over `--rounds` rounds of
 * `--calls` calls, in microseconds per call, so a slow round (GC, a noisy neighbour) does not
 * move it.
 *
 *   node apps/app/scripts/measure-tokens.ts [--calls 20000] [--rounds 7]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { TokenService } from '../src/tokens.ts';

function microsPerCall(calls: number, rounds: number, call: (i: number) => unknown): number {
  const perRound: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i += 1) call(round * calls + i);
    perRound.push(Number(process.hrtime.bigint() - started) / 1000 / calls);
  }
  perRound.sort((a, b) => a - b);
  return Math.round((perRound[Math.floor(perRound.length / 2)] ?? 0) * 100) / 100;
}

function main(): void {
  const { values } = parseArgs({
    options: { calls: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } },
  });
  const calls = Number(values.calls);
  const rounds = Number(values.rounds);
  const tokens = new TokenService('a-secret-of-the-usual-length-for-hs256-keys');
  const runIds = Array.from({ length: 64 }, () => crypto.randomUUID());
  const engineTokens = runIds.map((runId) => tokens.signEngineToken({ runId, syncInstanceId: 'app-1' }, 60));
  const workerToken = tokens.signWorkerToken('worker-0', 3600);
  // A token no verifier has seen for every call of every round (`call` gets a running index).
  const fresh = Array.from({ length: calls * rounds }, (_, i) =>
    tokens.signEngineToken({ runId: `${runIds[0]}-${i}`, syncInstanceId: 'app-1' }, 60),
  );
  // Warm-up: JIT and any verifier cache, as in a running app.
  for (let i = 0; i < 2000; i += 1) tokens.verifyEngineToken(engineTokens[i % engineTokens.length] ?? '');
  const report = {
    calls,
    rounds,
    signEngineTokenUs: microsPerCall(calls, rounds, (i) =>
      tokens.signEngineToken({ runId: runIds[i % runIds.length] ?? '', syncInstanceId: 'app-1' }, 60),
    ),
    verifyNewEngineTokenUs: microsPerCall(calls, rounds, (i) => tokens.verifyEngineToken(fresh[i] ?? '')),
    verifyEngineTokenAgainUs: microsPerCall(calls, rounds, (i) =>
      tokens.verifyEngineToken(engineTokens[i % engineTokens.length] ?? ''),
    ),
    verifyWorkerTokenUs: microsPerCall(calls, rounds, () => tokens.verifyWorkerToken(workerToken)),
    node: process.version,
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main();
