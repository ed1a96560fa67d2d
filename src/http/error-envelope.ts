import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue, isGatewayError, type ErrorCode } from '../domain/errors.ts';
import { UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import { statementCutShort } from '../storage/session-limits.ts';
import { surfaceOf } from '../telemetry/surfaces.ts';
import { nonBlankPattern } from './schemas.ts';

/**
 * The spec's generic error envelope, the same fields on every surface. Beside them, the error in the shape the
 * clients of the path's surface parse, so they show the gateway's message: OpenAI's `error: {message, type,
 * code}` (alpha, and every route of the gateway's own); Anthropic's top-level `type: "error"` with that same
 * `error` (beta), with the `details` an SDK recovers by where the refusal has them; Google's `error: {code, message, status, details}`, with the HTTP status as `code` and the
 * gateway's code in an `ErrorInfo` detail (gamma).
 */
export interface ErrorEnvelope {
  errors: string[];
  status: number;
  success: false;
  path: string;
  timestamp: number;
  type?: 'error';
  error: SdkError | GoogleRpcError;
}

export interface SdkError {
  message: string;
  type: string;
  code: ErrorCode;
  /** What the SDK reads to recover from the refusal by itself, where the gateway gives it (GatewayError.sdkDetails). */
  details?: Readonly<Record<string, unknown>>;
}

export interface GoogleRpcError {
  code: number;
  message: string;
  status: string;
  details: Array<{ '@type': typeof errorInfoType; reason: ErrorCode; domain: typeof errorDomain }>;
}

const errorInfoType = 'type.googleapis.com/google.rpc.ErrorInfo';
const errorDomain = 'gateway';

export interface Classified {
  status: number;
  code: ErrorCode;
  messages: string[];
  sdkDetails?: Readonly<Record<string, unknown>>;
}

const codeByStatus = new Map<number, ErrorCode>(
  (Object.entries(errorCatalogue) as [ErrorCode, number][]).reverse().map(([code, status]) => [status, code]),
);
codeByStatus.set(400, 'GW_VALIDATION');

export function requestPath(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The SDKs' error classes by status, so a client can branch on `error.type` as it does with the upstreams. */
export function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

export function errorEnvelope({ status, code, messages, sdkDetails }: Classified, path: string): ErrorEnvelope {
  const message = messages.join('; ');
  const envelope: ErrorEnvelope = {
    errors: messages,
    status,
    success: false,
    path,
    timestamp: Date.now(),
    error: { message, type: errorTypeFor(status), code, ...(sdkDetails ? { details: sdkDetails } : {}) },
  };
  const surface = surfaceOf(path);
  if (surface === 'beta') envelope.type = 'error';
  else if (surface === 'gamma') {
    envelope.error = {
      code: status,
      message,
      status: rpcStatusFor(status),
      details: [{ '@type': errorInfoType, reason: code, domain: errorDomain }],
    };
  }
  return envelope;
}

/** The google.rpc status Google's APIs answer with each HTTP status (the names its SDKs branch on). */
export function rpcStatusFor(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ALREADY_EXISTS';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL';
  }
}

/**
 * Refusals that the same request cannot get past by being sent again (a balance, a spend cap, a key, the
 * request itself): the official SDKs retry every 429 and some 4xx unless told not to. Only a rate limit's 429
 * passes with time, and the rate-limit hook says so itself.
 */
function retryCannotHelp(status: number, code: ErrorCode): boolean {
  return status >= 400 && status < 500 && code !== 'GW_RATE_LIMITED' && code !== 'GW_TOO_MANY_ATTEMPTS';
}

export function sendError(request: FastifyRequest, reply: FastifyReply, refusal: Classified): FastifyReply {
  const { status, code } = refusal;
  const body = errorEnvelope(refusal, requestPath(request));
  if (retryCannotHelp(status, code)) reply.header('x-should-retry', 'false');
  return reply.code(status).header('x-gateway-error-code', code).type('application/json; charset=utf-8').send(body);
}

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/**
 * A union the value matched no branch of (`anyOf`), said once: what each branch asked that the value missed
 * (a bound, a format), the allowed constants listed, and the types of the other branches, instead of each
 * branch's own "must be equal to constant" before it.
 */
function unionMessage(anyOf: ValidationIssue, issues: readonly ValidationIssue[]): string {
  const branches = issues.filter(
    (issue) =>
      issue !== anyOf &&
      issue.instancePath === anyOf.instancePath &&
      issue.schemaPath.startsWith(`${anyOf.schemaPath}/`),
  );
  const constants = branches.flatMap((issue) =>
    issue.keyword === 'const' ? [String((issue.params as { allowedValue?: unknown }).allowedValue)] : [],
  );
  const types = new Set(
    branches.flatMap((issue) => (issue.keyword === 'type' ? [String((issue.params as { type?: unknown }).type)] : [])),
  );
  const missed = branches.flatMap((issue) =>
    issue.keyword !== 'const' && issue.keyword !== 'type' && issue.message ? [issue.message.replace(/^must /, '')] : [],
  );
  const asks = [
    ...new Set(missed),
    ...(constants.length > 0 ? [`be one of: ${constants.join(', ')}`] : []),
    ...(types.size > 0 ? [`be of type ${[...types].join(', ')}`] : []),
  ];
  return asks.length > 0 ? `must ${asks.join(', or ')}` : 'must match one of the allowed shapes';
}

/** Whether `inner` is an issue of a branch of `union` about a part of the union's value. */
const deeperIn = (union: ValidationIssue, inner: ValidationIssue) =>
  inner.instancePath.startsWith(`${union.instancePath}/`) && inner.schemaPath.startsWith(`${union.schemaPath}/`);

function describeValidation(error: FastifyError): string[] {
  const context = error.validationContext ?? 'request';
  // An `if` that failed is told by the issues of its `then` (a kind of an open tagged union that broke).
  const issues = (error.validation ?? []).filter((issue) => issue.keyword !== 'if');
  // The issues of a union's branches are told by the union's own message; a union whose value took one
  // branch's shape and broke it further in is told by those deeper issues alone (its other branches' types are
  // not what the client meant).
  const unions = issues.filter((issue) => issue.keyword === 'anyOf');
  const told = (issue: ValidationIssue) =>
    unions.some(
      (union) =>
        union !== issue &&
        union.instancePath === issue.instancePath &&
        issue.schemaPath.startsWith(`${union.schemaPath}/`),
    ) ||
    (issue.keyword === 'anyOf' && issues.some((inner) => deeperIn(issue, inner)));
  const messages = issues
    .filter((issue) => !told(issue))
    .map((issue) => {
      const where = `${context}${issue.instancePath.replaceAll('/', '.')}`;
      const params = issue.params as Record<string, unknown>;
      if (issue.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
        return `${where}.${params.additionalProperty} is not a recognised field`;
      }
      if (issue.keyword === 'enum' && Array.isArray(params.allowedValues))
        return `${where} must be one of: ${params.allowedValues.join(', ')}`;
      if (issue.keyword === 'anyOf') return `${where} ${unionMessage(issue, issues)}`;
      if (issue.keyword === 'pattern' && params.pattern === nonBlankPattern)
        return `${where} must contain a character other than white space or an invisible one`;
      if (issue.keyword === 'type' && Array.isArray(params.type)) return `${where} must be ${params.type.join(' or ')}`;
      return `${where} ${issue.message ?? 'is invalid'}`;
    });
  return [...new Set(messages)];
}

/** The 415 refusal's message, naming every body type the route takes (JSON alone, unless the route takes more). */
export function unsupportedMediaTypeMessage(taken: readonly string[]): string {
  return `unsupported Content-Type: send the body as ${taken.join(' or ')}`;
}

/**
 * A statement of the request the database cancelled at its time limit (a row another session keeps locked, a
 * statement running too long; session-limits.ts): rolled back, so the request may be sent again as it is.
 */
const storageBusy: Classified = {
  status: 503,
  code: 'GW_STORAGE_BUSY',
  messages: [
    'the database did not finish a statement of this request within its time limit (a row it needs may be locked by another transaction); try again',
  ],
};

/** Seconds a client is asked to wait before sending again a request refused with `storageBusy`. */
export const storageBusyRetryAfterSeconds = 1;

/** Maps anything thrown while handling a request to a status and the envelope's messages. */
export function classifyError(error: unknown, bodyLimit: number): Classified {
  if (isGatewayError(error))
    return {
      status: error.status,
      code: error.code,
      messages: error.messages,
      ...(error.sdkDetails ? { sdkDetails: error.sdkDetails } : {}),
    };
  if (statementCutShort(error)) return storageBusy;
  if (error instanceof UpstreamUnreachableError)
    return { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', messages: [error.message] };
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation) {
    // A path parameter outside its schema (an id with a character no id has, or too long) names nothing
    // that can exist: 404, as an unknown id gets, and no lookup is made.
    if (fastifyError.validationContext === 'params') {
      return {
        status: 404,
        code: 'GW_NOT_FOUND',
        messages: describeValidation(fastifyError as FastifyError).map((message) => `no such resource: ${message}`),
      };
    }
    return { status: 400, code: 'GW_VALIDATION', messages: describeValidation(fastifyError as FastifyError) };
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        code: 'GW_UNSUPPORTED_MEDIA_TYPE',
        messages: [unsupportedMediaTypeMessage(['application/json'])],
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        code: 'GW_PAYLOAD_TOO_LARGE',
        messages: [`request body is larger than the limit of ${bodyLimit} bytes`],
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 400,
        code: 'GW_MALFORMED_JSON',
        messages: ['the body is empty but Content-Type is application/json'],
      };
    case 'FST_ERR_BAD_URL':
      return { status: 400, code: 'GW_VALIDATION', messages: ['the URL path has a malformed percent-encoding'] };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 400, code: 'GW_VALIDATION', messages: ['a path parameter is longer than the router accepts'] };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return {
        status: 400,
        code: 'GW_MALFORMED_JSON',
        messages: [`malformed JSON body: ${fastifyError.message ?? ''}`.trim()],
      };
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return { status: 400, code: 'GW_MALFORMED_JSON', messages: [`malformed JSON body: ${error.message}`] };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return {
      status,
      code: codeByStatus.get(status) ?? 'GW_VALIDATION',
      messages: [fastifyError.message ?? 'bad request'],
    };
  }
  return { status: 500, code: 'GW_INTERNAL', messages: ['internal error'] };
}

/**
 * The 503s that are a known, announced state rather than a fault, with what their warning says: an open
 * breaker (a provider is known to be failing) and rate limits failing closed while their Redis is down (the
 * outage itself is logged once when it starts). Both come once per refused request while they last, and
 * `retry-after` says when to try again.
 */
const expectedRefusals: Partial<Record<ErrorCode, string>> = {
  GW_UPSTREAM_UNAVAILABLE: "request refused: the model's providers are unavailable",
  GW_RATE_LIMITS_UNAVAILABLE: 'request refused: rate limits cannot be checked (their Redis is unreachable)',
};

/**
 * How a request that failed on the gateway's side is logged. An expected refusal (`expectedRefusals`) is a
 * warning with the reason, no stack. Every other 5xx is an error with its stack (storage errors made safe by
 * the logger's `err` serializer). A 4xx is the client's, logged by the request line alone.
 */
export function logRequestFailure(log: FastifyBaseLogger, error: unknown, classified: Classified): void {
  if (classified.status < 500) return;
  const refusal = expectedRefusals[classified.code];
  if (refusal !== undefined) {
    log.warn({ code: classified.code, reason: classified.messages.join('; ') }, refusal);
    return;
  }
  log.error({ err: error }, 'request failed');
}
