import type { Static, TSchema } from 'typebox';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import { describeUnstorableText, findUnstorableText } from './storable-text.ts';

function compiler(options: Options) {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, removeAdditional: true, strict: false, ...options });
  addFormats.default(ajv, ['email', 'date-time', 'uri']);
  // RFC 3339 allows moments no clock here holds: a leap second (JavaScript's dates have none), and years before
  // 1 or after 9999 once in UTC (PostgreSQL's timestamps refuse them). Such a moment is not a date-time here.
  const rfc3339 = ajv.formats['date-time'];
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => formatValidates(rfc3339, text) && storableMoment(text),
  });
  return ajv;
}

/** Whether ajv-formats' own check of a format takes `text` (it is written as a function or as an object holding one). */
function formatValidates(format: unknown, text: string): boolean {
  if (typeof format === 'function') return format(text) === true;
  if (format !== null && typeof format === 'object' && 'validate' in format && typeof format.validate === 'function')
    return format.validate(text) === true;
  return false;
}

/** A moment JavaScript reads (no leap second) within the years 1 to 9999 in UTC. */
function storableMoment(text: string): boolean {
  const moment = new Date(text);
  if (Number.isNaN(moment.getTime())) return false;
  const year = moment.getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/**
 * Text storage cannot hold in a query string or a path parameter (`%00`, an encoded lone surrogate), found
 * before the schema runs: a query value answers 400 naming it; a path parameter names nothing that can
 * exist, so it answers 404, and no lookup is made. (JSON bodies are checked by their parser.)
 */
function unstorableTextError(httpPart: string, data: unknown): GatewayError | undefined {
  const root = httpPart === 'params' ? 'params' : 'querystring';
  const found = findUnstorableText(data, root);
  if (!found) return undefined;
  return httpPart === 'params'
    ? new GatewayError('GW_NOT_FOUND', `no such resource: ${describeUnstorableText(found)}`)
    : new GatewayError('GW_VALIDATION', describeUnstorableText(found));
}

/**
 * What a check does with a body or query field its schema does not declare (where the schema forbids
 * additional ones).
 */
export type UnknownFields = 'strip' | 'refuse';

/**
 * Bodies are checked strictly (a number sent as a string is an error, not coerced); query strings and path
 * parameters arrive as text, so there they are coerced to the declared types, after the check for text
 * storage cannot hold. Undeclared body and query fields, where a schema forbids additional properties, are
 * stripped (the generation surfaces: the spec has native endpoints strip unknown request fields) or refused
 * with a 400 naming each (the management APIs, see `refuseUnknownFields`).
 */
export function validatorCompiler(unknownFields: UnknownFields = 'strip'): FastifySchemaCompiler<unknown> {
  const removeAdditional = unknownFields === 'strip';
  const strict = compiler({ coerceTypes: false, removeAdditional });
  const coercing = compiler({ coerceTypes: 'array', removeAdditional });
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return strict.compile(schema as object);
    const validate = coercing.compile(schema as object);
    if (httpPart !== 'querystring' && httpPart !== 'params') return validate;
    // Fastify reads a `{ error }` answer as the validation error, and `.errors` after a `false` answer.
    const checked = (data: unknown, context?: Parameters<typeof validate>[1]): boolean | { error: GatewayError } => {
      const refused = unstorableTextError(httpPart, data);
      if (refused) return { error: refused };
      const valid = validate(data, context);
      checked.errors = validate.errors;
      return valid;
    };
    checked.errors = validate.errors;
    // Fastify passes the parent object (so Ajv may coerce the root) only to a function that carries this.
    checked.schemaEnv = validate.schemaEnv;
    return checked;
  };
}

const refusing = validatorCompiler('refuse');

/**
 * Makes the routes of a management plugin (account, admin and operator APIs) and of the plugins it registers
 * refuse a body or query field their schema does not declare, with a 400 naming it (`body.x is not a
 * recognised field`), instead of dropping it, wherever their schemas forbid additional properties (open maps,
 * such as a catalog model's parameters, take any name). test/integration/unknown-body-fields.test.ts sends an
 * unknown top-level field to every such route.
 */
export function refuseUnknownFields(app: FastifyInstance): void {
  app.setValidatorCompiler(refusing);
}

const lateBodies: Record<UnknownFields, Ajv> = {
  strip: compiler({ coerceTypes: false }),
  refuse: compiler({ coerceTypes: false, removeAdditional: false }),
};

/**
 * A body check for a schema chosen after routing (one route serving several actions): it fails exactly as
 * a route's own body schema does, so the error envelope names the fields the same way.
 */
export function bodyValidator<S extends TSchema>(
  schema: S,
  context = 'body',
  unknownBodyFields: UnknownFields = 'strip',
): (body: unknown) => Static<S> {
  const validate = lateBodies[unknownBodyFields].compile<Static<S>>(schema);
  return (body) => {
    if (!validate(body))
      throw Object.assign(new Error(`${context} validation failed`), {
        statusCode: 400,
        validation: validate.errors ?? [],
        validationContext: context,
      });
    return body;
  };
}
