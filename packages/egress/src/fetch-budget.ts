import { type FetchLimits, FlowboxError } from '@flowbox/protocol';

/**
 * One run's share of a process for its code steps' `fetch` calls: at most `maxInFlight`
 * requests at once (the rest wait in order), and at most `maxBufferedBytes` held at once by all
 * of them, counting each request from the moment it asks for a slot (its URL, headers and body)
 * and each response as its bytes arrive. Bytes past the budget are refused at once, so a fan-out
 * of big responses stops streaming instead of growing the process.
 */
export interface FetchBudget {
  /**
   * A slot holding `bytes` (the request as it stands), when one is free; refuses with
   * CODE_STEP_FETCH_LIMIT when those bytes do not fit, and with the signal's reason when it aborts
   * while waiting.
   */
  acquire(signal: AbortSignal, bytes: number): Promise<FetchSlot>;
  /** Requests in flight and bytes held now (for tests and logs). */
  usage(): { inFlight: number; waiting: number; bytes: number };
}

export interface FetchSlot {
  /** Counts `bytes` more for this request; throws CODE_STEP_FETCH_LIMIT past the budget. */
  hold(bytes: number): void;
  /** Gives the slot and every byte it held back; later calls do nothing. */
  release(): void;
}

interface Waiter {
  grant(): void;
}

export function createFetchBudget(limits: FetchLimits): FetchBudget {
  let inFlight = 0;
  let bytes = 0;
  const waiting: Waiter[] = [];

  const reserve = (more: number): void => {
    if (bytes + more > limits.maxBufferedBytes) {
      throw new FlowboxError(
        'CODE_STEP_FETCH_LIMIT',
        `fetch refused: this run's requests would hold more than ${limits.maxBufferedBytes} bytes at once (CODE_STEP_FETCH_MAX_BUFFERED_MB)`,
      );
    }
    bytes += more;
  };

  const slot = (initial: number): FetchSlot => {
    let held = initial;
    let released = false;
    return {
      hold(more) {
        if (released) return;
        reserve(more);
        held += more;
      },
      release() {
        if (released) return;
        released = true;
        bytes -= held;
        inFlight -= 1;
        waiting.shift()?.grant();
      },
    };
  };

  return {
    acquire(signal, requestBytes) {
      signal.throwIfAborted();
      // Held while waiting too: a queue of big request bodies is what the budget bounds.
      reserve(requestBytes);
      if (inFlight < limits.maxInFlight) {
        inFlight += 1;
        return Promise.resolve(slot(requestBytes));
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          grant() {
            signal.removeEventListener('abort', onAbort);
            inFlight += 1;
            resolve(slot(requestBytes));
          },
        };
        const onAbort = () => {
          const at = waiting.indexOf(waiter);
          if (at >= 0) waiting.splice(at, 1);
          bytes -= requestBytes;
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.push(waiter);
      });
    },
    usage: () => ({ inFlight, waiting: waiting.length, bytes }),
  };
}
