import { Type } from '@fastify/type-provider-typebox';
import { errorCatalogue, type ErrorCode } from '../../domain/errors.ts';
import type { ErrorEnvelope } from '../error-envelope.ts';
import type { Holds, SchemaAgrees } from './schema-agreement.ts';

const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

/** The error envelope of error-envelope.ts as a schema: the spec's fields and the `error` object the SDKs read. */
export const ErrorEnvelopeSchema = Type.Object(
  {
    errors: Type.Array(Type.String(), { description: 'What went wrong, one message per problem' }),
    status: Type.Integer({ description: 'The HTTP status, repeated' }),
    success: Type.Literal(false),
    path: Type.String({ description: 'The path of the request, without its query string' }),
    timestamp: Type.Number({ description: 'When the error was answered, in epoch milliseconds' }),
    error: Type.Object(
      {
        message: Type.String({ description: '`errors` joined with "; "' }),
        type: Type.String({
          description:
            'The SDK error class: invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error or api_error',
        }),
        code: Type.Enum(errorCodes, { description: 'The stable code, also sent as the x-gateway-error-code header' }),
      },
      { description: 'The same error in the shape the official OpenAI, Anthropic and Gemini SDKs read' },
    ),
  },
  { description: 'An error the gateway raised itself, identical on every surface' },
);

/** The schema describes what sendError() writes: this stops compiling the day the two drift apart. */
export type ErrorEnvelopeSchemaAgrees = Holds<SchemaAgrees<typeof ErrorEnvelopeSchema, ErrorEnvelope>>;
