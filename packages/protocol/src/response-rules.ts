/**
 * What a flow's response may hold, checked where it is built (the response step) and again where
 * it is sent (the app), so a piece that calls `respond` directly is held to the same rules.
 *
 * - status 200–599: 1xx are interim answers (`101 Switching Protocols` hands the connection over
 *   and the caller never gets a final response), and the caller is owed one final response.
 * - header names are RFC 9110 tokens, and values hold no control character (CR, LF, NUL…) and
 *   nothing past Latin-1: anything else cannot be written to the wire, or would split the response.
 */
export const RESPONSE_STATUS_RANGE = { min: 200, max: 599 } as const;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Tab, visible ASCII and obs-text; Node refuses the rest (`ERR_INVALID_CHAR`).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why this status cannot answer a webhook, or null when it can. */
export function responseStatusProblem(status: number): string | null {
  if (Number.isInteger(status) && status >= RESPONSE_STATUS_RANGE.min && status <= RESPONSE_STATUS_RANGE.max)
    return null;
  return `status ${status} is not a final HTTP status (${RESPONSE_STATUS_RANGE.min}–${RESPONSE_STATUS_RANGE.max})`;
}

/** Why this header cannot be sent, or null when it can. Names the header, never its value. */
export function responseHeaderProblem(name: string, value: string): string | null {
  if (!HEADER_NAME.test(name)) return `header name ${quoteHeaderName(name)} is not a valid HTTP header name`;
  if (!HEADER_VALUE.test(value))
    return `header ${quoteHeaderName(name)} has a value with a character HTTP cannot carry (CR, LF, NUL, another control character, or one past Latin-1)`;
  return null;
}

/** The first problem of a response's status and headers, or null when it can be sent. */
export function flowResponseProblem(response: {
  status: number;
  headers: Record<string, string>;
}): string | null {
  const status = responseStatusProblem(response.status);
  if (status !== null) return status;
  for (const [name, value] of Object.entries(response.headers)) {
    const problem = responseHeaderProblem(name, value);
    if (problem !== null) return problem;
  }
  return null;
}

/** A header name as an error message shows it: quoted, and cut short (a name may be any length). */
export function quoteHeaderName(name: string): string {
  return JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}…` : name);
}
