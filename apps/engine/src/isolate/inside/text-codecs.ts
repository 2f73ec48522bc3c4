/**
 * Runs inside a run's isolate: TextEncoder/TextDecoder (UTF-8 only) and atob/btoa, which V8
 * alone does not have and pieces and code steps expect. Pure code, so they live in the snapshot.
 */
export class IsolateTextEncoder {
  readonly encoding = 'utf-8';

  encode(input = ''): Uint8Array {
    const text = String(input);
    const bytes: number[] = [];
    for (let i = 0; i < text.length; i += 1) {
      let code = text.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          i += 1;
        } else code = 0xfffd;
      } else if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
      if (code < 0x80) bytes.push(code);
      else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
      else if (code < 0x10000)
        bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
      else {
        bytes.push(
          0xf0 | (code >> 18),
          0x80 | ((code >> 12) & 0x3f),
          0x80 | ((code >> 6) & 0x3f),
          0x80 | (code & 0x3f),
        );
      }
    }
    return Uint8Array.from(bytes);
  }
}

export class IsolateTextDecoder {
  readonly encoding = 'utf-8';

  constructor(label = 'utf-8') {
    if (!/^utf-?8$/i.test(String(label).trim()))
      throw new RangeError(`unsupported encoding ${String(label)}`);
  }

  decode(input?: ArrayBuffer | ArrayBufferView): string {
    const bytes = toBytes(input);
    let out = '';
    let i = 0;
    while (i < bytes.length) {
      const first = bytes[i] ?? 0;
      const [length, initial] =
        first < 0x80
          ? [1, first]
          : first >= 0xf0 && first < 0xf8
            ? [4, first & 0x07]
            : first >= 0xe0
              ? [3, first & 0x0f]
              : first >= 0xc0
                ? [2, first & 0x1f]
                : [0, 0];
      let code = initial;
      let valid = length > 0 && i + length <= bytes.length;
      for (let k = 1; valid && k < length; k += 1) {
        const byte = bytes[i + k] ?? 0;
        if ((byte & 0xc0) !== 0x80) valid = false;
        else code = (code << 6) | (byte & 0x3f);
      }
      if (!valid) {
        out += '\ufffd';
        i += 1;
        continue;
      }
      out += String.fromCodePoint(code > 0x10ffff ? 0xfffd : code);
      i += length;
    }
    return out;
  }
}

/** Any BufferSource as bytes (a view over the same memory). */
export function toBytes(input: ArrayBuffer | ArrayBufferView | undefined): Uint8Array {
  if (input === undefined) return new Uint8Array(0);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError('expected an ArrayBuffer or a typed array');
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function btoa(data: unknown): string {
  const text = String(data);
  let out = '';
  for (let i = 0; i < text.length; i += 3) {
    const codes = [text.charCodeAt(i), text.charCodeAt(i + 1), text.charCodeAt(i + 2)];
    for (const code of codes) {
      if (code > 0xff) throw new Error('btoa: the string has characters outside Latin-1');
    }
    const [a = 0, b, c] = codes;
    const bits = (a << 16) | ((Number.isNaN(b) ? 0 : (b ?? 0)) << 8) | (Number.isNaN(c) ? 0 : (c ?? 0));
    out += ALPHABET[(bits >> 18) & 63];
    out += ALPHABET[(bits >> 12) & 63];
    out += Number.isNaN(b) ? '=' : ALPHABET[(bits >> 6) & 63];
    out += Number.isNaN(c) ? '=' : ALPHABET[bits & 63];
  }
  return out;
}

export function atob(data: unknown): string {
  const text = String(data).replace(/[\t\n\f\r ]/g, '');
  const unpadded = text.length % 4 === 0 ? text.replace(/={1,2}$/, '') : text;
  if (unpadded.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(unpadded)) {
    throw new Error('atob: the string is not valid base64');
  }
  let out = '';
  let bits = 0;
  let count = 0;
  for (const char of unpadded) {
    bits = (bits << 6) | ALPHABET.indexOf(char);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += String.fromCharCode((bits >> count) & 0xff);
    }
  }
  return out;
}
