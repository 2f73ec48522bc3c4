/** An error the CLI reports as `error CODE: message` and exit 1; the code is the API's when it answered one. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}
