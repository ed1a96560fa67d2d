import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function compiler(options: Options) {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, removeAdditional: true, strict: false, ...options });
  addFormats.default(ajv, ['email', 'date-time', 'uri']);
  return ajv;
}

/**
 * Bodies are checked strictly (a number sent as a string is an error, not coerced); query strings and path
 * parameters arrive as text, so there they are coerced to the declared types. Undeclared body fields are
 * stripped where a schema forbids additional properties.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = compiler({ coerceTypes: false });
  const coercing = compiler({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
}

const lateBodies = compiler({ coerceTypes: false });

/**
 * A body check for a schema chosen after routing (one route serving several actions): it fails exactly as
 * a route's own body schema does, so the error envelope names the fields the same way.
 */
export function bodyValidator<T>(schema: object, context = 'body'): (body: unknown) => T {
  const validate = lateBodies.compile(schema);
  return (body) => {
    if (!validate(body)) throw Object.assign(new Error(`${context} validation failed`), { statusCode: 400, validation: validate.errors ?? [], validationContext: context });
    return body as T;
  };
}
