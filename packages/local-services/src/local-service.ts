/**
 * Glossary
 * - local service: a server (Redis, Postgres, PGlite, an S3-compatible store) started on this
 *   machine for `pnpm dev`, for the test run or for the benchmark; `close()` stops it for real
 *   and frees its port.
 * - tools dir: where flowbox keeps the binaries it builds or downloads itself
 *   (`$FLOWBOX_TOOLS_DIR`, by default `~/.cache/flowbox`); its `bin/` holds versitygw.
 */
export interface LocalService {
  url: string;
  close(): Promise<void>;
}

/** A server binary is not installed; the message says how to install it. */
export class MissingBinaryError extends Error {
  readonly binary: string;

  constructor(binary: string, howToInstall: string) {
    super(`${binary} was not found. ${howToInstall}`);
    this.name = 'MissingBinaryError';
    this.binary = binary;
  }
}

/** A server process exited or stayed silent before it was ready. */
export class ServiceStartError extends Error {
  readonly output: string;

  constructor(message: string, output: string) {
    super(output === '' ? message : `${message}\n--- last output ---\n${output}`);
    this.name = 'ServiceStartError';
    this.output = output;
  }
}
