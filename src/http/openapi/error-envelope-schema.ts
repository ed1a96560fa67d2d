import { Type } from '@fastify/type-provider-typebox';
import { errorCatalogue, type ErrorCode } from '../../domain/errors.ts';
import type { ErrorEnvelope } from '../error-envelope.ts';
import type { Holds, SchemaAgrees } from './schema-agreement.ts';

const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

const SdkErrorSchema = Type.Object(
  {
    message: Type.String({ description: '`errors` joined with "; "' }),
    type: Type.String({
      description:
        'The SDK error class: invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error or api_error',
    }),
    code: Type.Enum(errorCodes, { description: 'The stable code, also sent as the x-gateway-error-code header' }),
  },
  { description: "The error as OpenAI's and Anthropic's SDKs read it (every surface but gamma)" },
);

const GoogleRpcErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: 'The HTTP status, as Google APIs answer it' }),
    message: Type.String({ description: '`errors` joined with "; "' }),
    status: Type.String({ description: 'The google.rpc status name (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...)' }),
    details: Type.Array(
      Type.Object({
        '@type': Type.Literal('type.googleapis.com/google.rpc.ErrorInfo'),
        reason: Type.Enum(errorCodes, { description: 'The stable code, also sent as the x-gateway-error-code header' }),
        domain: Type.Literal('gateway'),
      }),
      { description: "One ErrorInfo, naming the gateway's code" },
    ),
  },
  { description: "The error as Google's Gemini SDKs read it (gamma surface)" },
);

/** The error envelope of error-envelope.ts as a schema: the spec's fields and the `error` object the SDKs read. */
export const ErrorEnvelopeSchema = Type.Object(
  {
    errors: Type.Array(Type.String(), { description: 'What went wrong, one message per problem' }),
    status: Type.Integer({ description: 'The HTTP status, repeated' }),
    success: Type.Literal(false),
    path: Type.String({ description: 'The path of the request, without its query string' }),
    timestamp: Type.Number({ description: 'When the error was answered, in epoch milliseconds' }),
    type: Type.Optional(
      Type.Literal('error', { description: "On the beta surface, as Anthropic's clients read the error" }),
    ),
    error: Type.Union([SdkErrorSchema, GoogleRpcErrorSchema], {
      description: "The same error in the shape the clients of the path's surface read",
    }),
  },
  { description: 'An error the gateway raised itself: the same fields on every surface' },
);

/** The schema describes what sendError() writes: this stops compiling the day the two drift apart. */
export type ErrorEnvelopeSchemaAgrees = Holds<SchemaAgrees<typeof ErrorEnvelopeSchema, ErrorEnvelope>>;
