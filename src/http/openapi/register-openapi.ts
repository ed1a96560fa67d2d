import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { AnthropicError } from '../../protocols/anthropic/messages.ts';
import { ArkError } from '../../protocols/ark/multimodal-embeddings.ts';
import { GeminiError } from '../../protocols/gemini/generate-content.ts';
import { OpenAiError } from '../../protocols/openai/chat-completions.ts';
import { ErrorEnvelopeSchema } from './error-envelope-schema.ts';
import { documentRoute } from './document-route.ts';
import { keyOrSession, noCredential, securitySchemes } from './security-schemes.ts';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const envelopeRef = { $ref: '#/components/schemas/ErrorEnvelope' };

const errorResponses = {
  GatewayError: {
    description:
      'An error the gateway raised itself, in its error envelope; the `x-gateway-error-code` header carries `error.code`',
    content: { 'application/json': { schema: envelopeRef } },
  },
  GatewayOrUpstreamError: {
    description:
      "The gateway's error envelope for what it refuses itself; once its checks passed, an upstream provider's error is relayed as it came: " +
      "its body in the provider's protocol, its status (a 500 stays 500), and that status again in `x-upstream-status`",
    content: {
      'application/json': { schema: { anyOf: [envelopeRef, { $ref: '#/components/schemas/UpstreamError' }] } },
    },
  },
};

const UpstreamError = Type.Union([OpenAiError, AnthropicError, GeminiError, ArkError], {
  description: "A provider's own error body, in the protocol of the provider that served the request",
});

interface Operation {
  operationId?: string;
  responses?: Record<string, unknown>;
  'x-relays-upstream-errors'?: boolean;
}

const operationKeys = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/**
 * `GET /api/v1/usage/{generationId}` as `getApiV1UsageByGenerationId`: the method and every word of the path, so
 * each operation's is its own and every route has one without naming it (a route's own `operationId` wins).
 */
function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .map((segment) => (segment.startsWith('{') ? `by-${segment.slice(1, -1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '');
  const capitalised = (words.length > 0 ? words : ['root']).map((word) => word[0]!.toUpperCase() + word.slice(1));
  return method + capitalised.join('');
}

/**
 * Every operation gets its operationId and answers errors in the envelope (4XX, 5XX), unless its route
 * documents them itself.
 */
function withOperationDefaults<D extends { paths?: object }>(openapiObject: D): D {
  const seen = new Set<unknown>();
  for (const [path, pathItem] of Object.entries(
    (openapiObject.paths ?? {}) as Record<string, Record<string, unknown> | undefined>,
  )) {
    for (const [method, value] of Object.entries(pathItem ?? {})) {
      if (!operationKeys.has(method) || !pathItem) continue;
      // The methods of one route (GET and HEAD of a download) share one operation object: each gets its own,
      // the later ones without the first one's operationId.
      const operation = (seen.has(value) ? { ...(value as Operation), operationId: undefined } : value) as Operation;
      seen.add(value);
      pathItem[method] = operation;
      operation.operationId ??= operationIdOf(method, path);
      const response = {
        $ref: `#/components/responses/${operation['x-relays-upstream-errors'] ? 'GatewayOrUpstreamError' : 'GatewayError'}`,
      };
      operation.responses ??= {};
      operation.responses['4XX'] ??= response;
      operation.responses['5XX'] ??= response;
    }
  }
  return openapiObject;
}

/**
 * The OpenAPI document of every route, built from the route schemas (registered before any route, so it
 * sees them all), served at `/openapi.json`, with Swagger UI at `/docs`. Neither needs a credential.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Model gateway',
        version: packageVersion,
        description:
          'One catalog of models behind several wire surfaces (native, alpha = OpenAI-style, beta = Anthropic-style, gamma = Gemini-style), with exact USD billing. ' +
          'Answers that are server-sent events are documented as `text/event-stream`, with the schema of each event under `x-event-data`.',
      },
      components: {
        securitySchemes,
        schemas: { ErrorEnvelope: ErrorEnvelopeSchema, UpstreamError },
        responses: errorResponses,
      },
      // The gateway that serves the document: its paths are relative to where it was fetched from.
      servers: [{ url: '/', description: 'This gateway' }],
      security: keyOrSession,
      tags: [
        {
          name: 'native',
          description: "The gateway's own API (`/api/v1`): catalog, text, image, video, audio, cost estimates",
        },
        { name: 'alpha', description: 'OpenAI-style surface (`/api/alpha/v1`), for the official openai SDK' },
        { name: 'beta', description: 'Anthropic-style surface (`/api/beta`), for the official @anthropic-ai/sdk' },
        {
          name: 'gamma',
          description:
            'Gemini-style surface (`/api/gamma/v1beta`, or `/api/gamma/v1` alike), for the official @google/genai',
        },
        { name: 'compat', description: 'Usage records, balance and key lookup (`/api/compat/v1`)' },
        { name: 'account', description: "The signed-in account's own resources, used by the dashboard" },
        { name: 'admin', description: "The operator's API, open only when GATEWAY_ADMIN_TOKEN is set" },
        {
          name: 'operator',
          description: "The operator console's API (`/api/operator/v1`): a session of an operator account only",
        },
        { name: 'operations', description: 'Health probes, this document and the pages' },
      ],
    },
    transform: ({ schema, url, route }) => documentRoute({ schema, url, method: route.method }),
    transformObject: (document) =>
      'openapiObject' in document ? withOperationDefaults(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(
    '/openapi.json',
    {
      schema: {
        summary: 'This OpenAPI 3.1 document',
        description:
          'Every route of the gateway with its parameters, bodies, answers, credentials and examples, built from the route schemas.',
        security: noCredential,
        documentedExample: {
          answer: { openapi: '3.1.0', info: { title: 'Model gateway', version: packageVersion }, paths: {} },
        },
        response: {
          200: Type.Object({}, { description: 'The OpenAPI document of every route', additionalProperties: true }),
        },
      },
    },
    async () => app.swagger(),
  );
}
