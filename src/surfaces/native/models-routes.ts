import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { inputModalities, outputModalities } from '../../domain/capabilities.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { requireCredential } from '../../http/authentication.ts';
import { ModelIdPath } from '../../http/schemas.ts';
import { ModelSchema } from './answer-schemas.ts';
import { modelView } from './model-view.ts';
import { modelExample } from './native-examples.ts';

/** The services this surface uses, and only those. */
export type NativeModelsServices = Pick<GatewayServices, 'authenticator' | 'catalog'>;

const ModalityQuery = Type.Optional(
  Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })]),
);

/** `text,image`, or the parameter repeated; every value must be a known modality. */
export function parseModalities(
  field: string,
  raw: string | string[] | undefined,
  allowed: readonly string[],
): string[] | undefined {
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
  const unknown = values.filter((value) => !allowed.includes(value));
  if (unknown.length > 0) {
    throw new GatewayError(
      'GW_VALIDATION',
      `querystring.${field} has unknown modality "${unknown[0]}"; use ${allowed.join(', ')}`,
    );
  }
  return values;
}

export const nativeModelsRoutes: FastifyPluginAsyncTypebox<{ services: NativeModelsServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  app.get(
    '/ai/models',
    {
      schema: {
        summary: 'List the active models',
        description:
          "The catalog's active models, with their modalities and the effective capabilities of the provider row that serves them first; filtered by input and output modalities when asked.",
        documentedExample: { answer: [modelExample] },
        querystring: Type.Object({ inputModalities: ModalityQuery, outputModalities: ModalityQuery }),
        response: { 200: Type.Array(ModelSchema, { description: 'Active models having every modality asked for' }) },
      },
    },
    async (request) => {
      const filter = {
        inputModalities: parseModalities('inputModalities', request.query.inputModalities, inputModalities),
        outputModalities: parseModalities('outputModalities', request.query.outputModalities, outputModalities),
      };
      return services.catalog.list(filter).map(modelView);
    },
  );

  // Model ids may contain slashes, so the rest of the path is the id. The router has already
  // percent-decoded it; decoding again would turn `%25` into a URIError (500) and `%2541` into `A`.
  app.get(
    '/ai/models/*',
    {
      schema: {
        summary: 'One model with its capabilities',
        description:
          'A catalog model by its id (which may contain slashes), with the effective capabilities of the provider row that serves it first.',
        documentedExample: { answer: modelExample },
        params: ModelIdPath,
        wildcardName: 'modelId',
        response: { 200: ModelSchema },
      },
    },
    async (request) => modelView(services.catalog.get(request.params['*'])),
  );
};
