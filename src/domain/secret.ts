/** What a secret prints as, wherever it is printed: a log line, a trace, an error, an answer. */
export const redacted = '[redacted]';

const inspect = Symbol.for('nodejs.util.inspect.custom');

/**
 * A credential (a provider key, a configured header value, the admin token, the master secret) held so that
 * printing it cannot show it: JSON, `String()`, a template, `util.inspect` and console all give `[redacted]`,
 * and the value lives in a private field that no spread, `Object.keys` or structured clone copies. Only
 * `reveal()` gives the value back, called where it is sent or compared and nowhere else; a secret built from
 * another (`Bearer <key>`) is derived without revealing it at the call site.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The value itself: for the HTTP client as it writes a request's headers, and for comparisons and key derivation. */
  reveal(): string {
    return this.#value;
  }

  /** Whether the value is the empty string (an unset `${VAR}`): an empty key makes its provider inactive. */
  isEmpty(): boolean {
    return this.#value === '';
  }

  /** A secret built from this one (`Bearer <key>`, say), still a secret. */
  derive(build: (value: string) => string): Secret {
    return new Secret(build(this.#value));
  }

  /** `Bearer <value>`, for an `authorization` header. */
  bearer(): Secret {
    return this.derive((value) => `Bearer ${value}`);
  }

  toString(): string {
    return redacted;
  }

  toJSON(): string {
    return redacted;
  }

  [Symbol.toPrimitive](): string {
    return redacted;
  }

  [inspect](): string {
    return redacted;
  }
}

/** A header value as sent: a secret's revealed, a plain string as it is. */
export function revealed(value: string | Secret): string {
  return value instanceof Secret ? value.reveal() : value;
}
