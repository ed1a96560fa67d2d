/**
 * The one catalogue of errors the gateway raises itself. Every code has a fixed HTTP status; callers
 * check `code`, never the text. Retired codes are never reused.
 */
export const errorCatalogue = {
  GW_VALIDATION: 400,
  GW_MALFORMED_JSON: 400,
  GW_MODEL_NOT_AVAILABLE: 400,
  GW_MODEL_NOT_PRICED: 400,
  GW_PARAMETER_UNSUPPORTED: 400,
  GW_PARAMETER_OUT_OF_RANGE: 400,
  GW_UNAUTHENTICATED: 401,
  GW_INVALID_CREDENTIALS: 401,
  GW_INSUFFICIENT_BALANCE: 403,
  GW_KEY_REQUIRED: 403,
  GW_SESSION_REQUIRED: 403,
  GW_KEY_LIMIT_REACHED: 403,
  GW_FORBIDDEN: 403,
  GW_CSRF_REJECTED: 403,
  GW_NOT_FOUND: 404,
  GW_ROUTE_NOT_FOUND: 404,
  GW_REQUEST_TIMEOUT: 408,
  GW_CONFLICT: 409,
  GW_PAYLOAD_TOO_LARGE: 413,
  GW_UNSUPPORTED_MEDIA_TYPE: 415,
  GW_RANGE_NOT_SATISFIABLE: 416,
  GW_SPEND_CAP_REACHED: 429,
  GW_TOO_MANY_ATTEMPTS: 429,
  GW_RATE_LIMITED: 429,
  GW_HEADERS_TOO_LARGE: 431,
  GW_INTERNAL: 500,
  GW_UPSTREAM_UNREACHABLE: 502,
  GW_GENERATION_FAILED: 502,
  GW_UPSTREAM_UNAVAILABLE: 503,
  GW_RATE_LIMITS_UNAVAILABLE: 503,
  GW_STORAGE_BUSY: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorCatalogue;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: readonly string[];
  /** Sent as `retry-after` with the answer (a provider temporarily skipped, say); see `retryAfter`. */
  retryAfterSeconds: number | undefined;
  /** Headers the answer carries beside the envelope; see `withHeader`. */
  readonly headers: Record<string, string> = {};
  /** What the SDK-shaped `error` of the envelope carries as `details`; see `withSdkDetails`. */
  sdkDetails: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details: readonly string[] = []) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = errorCatalogue[code];
    this.details = details;
  }

  /** This refusal passes with time: the answer says after how many seconds (`retry-after`). */
  retryAfter(seconds: number | undefined): this {
    this.retryAfterSeconds = seconds;
    return this;
  }

  /** A header the refusal's answer carries (a 416's `content-range`, naming the size a range must fall in). */
  withHeader(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }

  /**
   * Details of the refusal that a client's SDK reads to recover by itself (beta: Anthropic's
   * `error.details.error_code`, on which its message threads go on unthreaded).
   */
  withSdkDetails(details: Readonly<Record<string, unknown>> | undefined): this {
    this.sdkDetails = details;
    return this;
  }

  /** The strings of the spec's envelope `errors` array. */
  get messages(): string[] {
    return [this.message, ...this.details];
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}
