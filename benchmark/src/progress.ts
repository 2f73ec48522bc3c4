/**
 * A one-line progress display on the terminal (stderr), redrawn in place; when stderr is not a
 * terminal (CI, a pipe) it prints one line per phase instead.
 */
export interface ProgressState {
  scenarioIndex: number;
  scenarioCount: number;
  scenario: string;
  phase: string;
  /** 0..1 within the phase, or null for phases without a measure (starting the stack). */
  fraction: number | null;
  detail: string;
  elapsedS: number;
}

const BAR_WIDTH = 24;

export function renderBar(fraction: number, width = BAR_WIDTH): string {
  const clamped = Math.min(1, Math.max(0, fraction));
  const full = Math.round(clamped * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function renderProgressLine(state: ProgressState, columns: number): string {
  const parts = [
    `[${state.scenarioIndex}/${state.scenarioCount}] ${state.scenario}`,
    state.phase,
    state.fraction === null ? '' : renderBar(state.fraction),
    state.detail,
    formatClock(state.elapsedS),
  ].filter((part) => part !== '');
  const line = parts.join('  ');
  return line.length > columns - 1 ? `${line.slice(0, Math.max(0, columns - 2))}…` : line;
}

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export class Progress {
  readonly #stream: ProgressStream;
  readonly #started = performance.now();
  #state: ProgressState = {
    scenarioIndex: 0,
    scenarioCount: 0,
    scenario: '',
    phase: '',
    fraction: null,
    detail: '',
    elapsedS: 0,
  };
  #drawn = false;

  constructor(stream: ProgressStream) {
    this.#stream = stream;
  }

  /** Starts a phase; on a non-terminal this prints one line. */
  phase(update: Partial<Omit<ProgressState, 'elapsedS'>>): void {
    this.#state = { ...this.#state, fraction: null, detail: '', ...update };
    if (this.#stream.isTTY === true) this.#draw();
    else this.#stream.write(`${this.#line(200)}\n`);
  }

  update(fraction: number | null, detail: string): void {
    this.#state = { ...this.#state, fraction, detail };
    if (this.#stream.isTTY === true) this.#draw();
  }

  /** Prints a message above the bar. */
  log(message: string): void {
    this.clear();
    this.#stream.write(`${message}\n`);
    if (this.#stream.isTTY === true && this.#state.scenario !== '') this.#draw();
  }

  clear(): void {
    if (this.#drawn) this.#stream.write('\r\x1b[2K');
    this.#drawn = false;
  }

  #line(columns: number): string {
    return renderProgressLine(
      { ...this.#state, elapsedS: (performance.now() - this.#started) / 1000 },
      columns,
    );
  }

  #draw(): void {
    this.#stream.write(`\r\x1b[2K${this.#line(this.#stream.columns ?? 100)}`);
    this.#drawn = true;
  }
}
