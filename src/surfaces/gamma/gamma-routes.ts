import { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogModel } from '../../catalog/catalog.ts';
import { compatModelFields, generationMethodsOf } from '../../gateway/model-listing.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { reportDroppedParameters, unnamedFields } from '../../http/dropped-parameters.ts';
import { passThroughEndings, relayAnswer, streamEncoded } from '../../streaming/relay.ts';
import type { SseWriter } from '../../streaming/sse-writer.ts';
import { compatModelFieldSchemas } from '../../http/answer-schemas.ts';
import {
  described,
  eventStreamSchema,
  jsonBody,
  relaysUpstreamErrors,
} from '../../http/openapi/route-documentation.ts';
import { ModelIdPath } from '../../http/schemas.ts';
import { bodyValidator } from '../../http/validation.ts';
import {
  BatchEmbedContentsRequest,
  BatchEmbedContentsResponse,
  EmbedContentRequest,
  EmbedContentResponse,
} from '../../protocols/gemini/embed-content.ts';
import {
  CountTokensRequest,
  CountTokensResponse,
  GeminiModel,
  GenerateContentRequest,
  GenerateContentResponse,
} from '../../protocols/gemini/generate-content.ts';
import { decodeBatchEmbedContents, decodeEmbedContent } from './embed-content-codec.ts';
import {
  ChunkEncoder,
  decodeContents,
  fieldNamesOfBody,
  gatedParametersOf,
  relayBody,
  responseOf,
  streamError,
} from './generate-content-codec.ts';
import { relayedJsonArray, translatedJsonArray } from './json-array-stream.ts';
import {
  generateContentRequestExample,
  generateContentResponseExample,
  modelExample,
  modelListExample,
} from './gamma-examples.ts';

/** The services this surface uses, and only those. */
export type GammaServices = Pick<GatewayServices, 'authenticator' | 'catalog' | 'embeddings' | 'text'>;

const generateContentBody = bodyValidator(GenerateContentRequest);
const embedContentBody = bodyValidator(EmbedContentRequest);
const batchBody = bodyValidator(BatchEmbedContentsRequest);

const countTokensBody = bodyValidator(CountTokensRequest);

const actions = [
  'generateContent',
  'streamGenerateContent',
  'countTokens',
  'embedContent',
  'batchEmbedContents',
] as const;
type Action = (typeof actions)[number];
const isAction = (name: string): name is Action => actions.some((action) => action === name);

/** `models/{model}:{action}`: the model is the catalog id, which may itself contain slashes. */
function parseModelPath(path: string): { modelId: string; action: Action } {
  const separator = path.lastIndexOf(':');
  const action = path.slice(separator + 1);
  if (separator <= 0 || !isAction(action)) {
    throw new GatewayError(
      'GW_ROUTE_NOT_FOUND',
      `unknown model action "${separator < 0 ? path : action}": use ${actions.join(', ')}`,
    );
  }
  return { modelId: path.slice(0, separator), action };
}

const ModelList = Type.Object(
  {
    data: Type.Array(
      Type.Unsafe<Record<string, unknown>>(
        Type.Object({
          id: Type.String({ description: 'The catalog id prefixed with the serving provider' }),
          ...compatModelFieldSchemas,
        }),
      ),
    ),
    models: Type.Array(GeminiModel, { description: "The protocol's own list, which the official SDK reads" }),
  },
  { description: 'The active models' },
);

/** The Gemini API's query credential, which its clients may send instead of a header. */
const KeyQuery = Type.Object({
  key: Type.Optional(
    Type.String({ maxLength: 300, description: 'An API key (x-goog-api-key or x-api-key are preferred)' }),
  ),
});

const modelAction = `\`<model>:<action>\`, the action one of ${actions.join(', ')}; the model is a catalog id and may contain slashes`;

/** One route serves four actions: each has the protocol's own body, checked once the path has said which. */
const actionBody = jsonBody(
  Type.Union([GenerateContentRequest, CountTokensRequest, EmbedContentRequest, BatchEmbedContentsRequest]),
  'generateContent and streamGenerateContent: a GenerateContentRequest; countTokens: a CountTokensRequest; embedContent: an EmbedContentRequest; batchEmbedContents: a BatchEmbedContentsRequest',
);

const actionAnswer = {
  description:
    'generateContent: the response; streamGenerateContent: with `alt=sse` server-sent events of response chunks (the stream simply ends), without it one JSON array of them; ' +
    "countTokens: the prompt's tokens as the gateway counts them (nothing is charged); " +
    'embedContent: one embedding; batchEmbedContents: one per request, in order',
  content: {
    'application/json': {
      schema: Type.Union([
        GenerateContentResponse,
        Type.Array(GenerateContentResponse),
        CountTokensResponse,
        EmbedContentResponse,
        BatchEmbedContentsResponse,
      ]),
    },
    'text/event-stream': {
      schema: eventStreamSchema(
        GenerateContentResponse,
        'streamGenerateContent with `alt=sse`; the stream simply ends.',
      ),
    },
  },
};

function geminiModelOf(model: CatalogModel): Static<typeof GeminiModel> {
  return {
    name: `models/${model.modelId}`,
    version: String(model.revision),
    displayName: model.name ?? model.modelId,
    ...(model.maxOutputTokens !== undefined ? { outputTokenLimit: model.maxOutputTokens } : {}),
    supportedGenerationMethods: generationMethodsOf(model),
  };
}

/** The gamma (generateContent-style) surface. */
export const gammaRoutes: FastifyPluginAsyncTypebox<{ services: GammaServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptGoogleKeys: true }));
  // The Gemini API answers the same under both versions, and @google/genai calls v1 unless told otherwise.
  await app.register(versionRoutes, { prefix: '/v1beta', services });
  await app.register(versionRoutes, { prefix: '/v1', services });
};

/** The model list and the model actions, under one API version. */
const versionRoutes: FastifyPluginAsyncTypebox<{ services: GammaServices }> = async (app, { services }) => {
  app.get(
    '/models',
    {
      schema: {
        summary: 'The model list',
        description:
          "The catalog's active models, in the gateway's list and in the protocol's own `models` list the official SDK reads.",
        documentedExample: { answer: modelListExample },
        querystring: KeyQuery,
        response: { 200: ModelList },
      },
    },
    async () => {
      const models = services.catalog.list();
      return {
        data: models.map((model) => ({
          id: `${model.rows[0]?.providerId}/${model.modelId}`,
          ...compatModelFields(model),
        })),
        // The protocol's own list shape, which the official SDK reads.
        models: models.map(geminiModelOf),
      };
    },
  );

  // The protocol's own model object, as its list has it; the model is the catalog id, which may contain slashes.
  app.get(
    '/models/*',
    {
      schema: {
        summary: 'One model',
        description: "A catalog model in Gemini's model shape, with the generation methods it really serves.",
        documentedExample: { answer: modelExample },
        params: ModelIdPath,
        // One path with the model actions, which differ only in their method (OpenAPI has no two such paths).
        wildcardName: 'modelAction',
        querystring: KeyQuery,
        response: { 200: described(GeminiModel, 'The model') },
      },
    },
    async (request) => geminiModelOf(services.catalog.get(request.params['*'])),
  );

  app.post(
    '/models/*',
    // Each action has its own body, checked once the path has said which action it is.
    {
      schema: {
        summary: 'generateContent, streamGenerateContent, countTokens, embedContent or batchEmbedContents of a model',
        description:
          "Gemini's model actions, named in the path as `<model>:<action>` and served by any catalog model of the kind (text models translated for providers of other protocols). Billed by the tokens used; countTokens is free.",
        documentedExample: { request: generateContentRequestExample, answer: generateContentResponseExample },
        params: Type.Object({ '*': Type.String({ maxLength: 400, description: modelAction }) }),
        wildcardName: 'modelAction',
        querystring: Type.Object({ alt: Type.Optional(Type.Literal('sse')), ...KeyQuery.properties }),
        body: Type.Object({}),
        documentedBody: actionBody,
        response: { 200: actionAnswer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const { modelId, action } = parseModelPath(request.params['*']);
      if (action === 'embedContent' || action === 'batchEmbedContents') {
        const decoded =
          action === 'embedContent'
            ? decodeEmbedContent(embedContentBody(request.body), modelId)
            : decodeBatchEmbedContents(batchBody(request.body), modelId);
        const answer = await services.embeddings.embed(requestContextOf(request, 'gamma', action), {
          modelId,
          ...decoded,
          dimensionsField: 'outputDimensionality',
          recordedRequest: { surface: 'gamma', endpoint: action, model: modelId, dimensions: decoded.dimensions },
        });
        reportDroppedParameters(reply, answer.droppedParameters);
        const vectors = answer.vectors.map((values) => ({ values }));
        return action === 'embedContent' ? { embedding: vectors[0] } : { embeddings: vectors };
      }
      if (action === 'countTokens') {
        const counted = countTokensBody(request.body);
        const prompt = counted.generateContentRequest ?? generateContentBody(counted);
        return {
          totalTokens: await services.text.countTokens(
            callerOf(request),
            modelId,
            () => decodeContents(prompt).messages,
          ),
        };
      }
      const body = generateContentBody(request.body);
      const decoded = decodeContents(body);
      const streaming = action === 'streamGenerateContent';
      const sse = request.query.alt === 'sse';
      const config = body.generationConfig ?? {};
      const run = await services.text.start(requestContextOf(request, 'gamma', action), {
        modelId,
        ...decoded,
        maxTokens: config.maxOutputTokens,
        temperature: config.temperature,
        topP: config.topP,
        stop: config.stopSequences,
        choices: config.candidateCount,
        gatedParameters: gatedParametersOf(body),
        fieldNames: fieldNamesOfBody(body),
        notTranslated: withDecoded(unnamedFields(body, GenerateContentRequest), decoded.notTranslated),
        recordedRequest: { surface: 'gamma', endpoint: action, model: modelId, stream: streaming },
        whole: !streaming,
        relay: {
          protocol: 'gemini',
          operation: !streaming
            ? 'generate-content'
            : sse
              ? 'stream-generate-content-sse'
              : 'stream-generate-content-json',
          streaming: streaming && sse,
          prepare: ({ droppedNativeNames, maxOutputTokens }) => relayBody(body, droppedNativeNames, maxOutputTokens),
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      // Chunks of an upstream of this protocol pass through as they came; an event stream or a JSON array the
      // upstream failed or closed before its last chunk (the one with a finish reason) ends with the error chunk.
      if (run.kind === 'relay') {
        const jsonArray = streaming && !sse && run.status < 300;
        const body = jsonArray ? relayedJsonArray(request.log, run.body, run.reading) : run.body;
        return relayAnswer(
          { request, reply },
          { status: run.status, contentType: run.contentType, body },
          {
            streaming: streaming && sse,
            asItArrives: jsonArray,
            hooks: passThroughEndings(run.reading, streamFailure),
          },
        );
      }
      if (run.kind === 'whole') return reply.send(responseOf(modelId, run.answer));
      if (sse) return streamSse(request, reply, { events: run.events, model: modelId });
      // A client that leaves before the array's first element destroys a generator that never started, whose
      // own cleanup then never runs: the events are let go here, so the rest is still read and billed.
      const events = run.events[Symbol.asyncIterator]();
      if (reply.raw.destroyed) void events.return?.();
      else reply.raw.once('close', () => void events.return?.());
      return reply
        .type('application/json')
        .send(Readable.from(translatedJsonArray(request.log, { [Symbol.asyncIterator]: () => events }, modelId)));
    },
  );
};

/**
 * The in-stream error chunk, on translated and pass-through event streams alike, after an empty line. The empty
 * line is valid SSE, which the clients that read the error chunk (@google/genai, the AI SDK) skip; the older
 * @google/generative-ai (under LangChain's ChatGoogleGenerativeAI) ignores an error chunk, but reads events only
 * where one begins at once, so it fails such a stream ("Failed to parse stream") instead of ending it as a
 * shorter success.
 */
const streamFailure = async (sse: SseWriter) => {
  await sse.raw('\n');
  await sse.data(streamError);
};

function streamSse(
  request: FastifyRequest,
  reply: FastifyReply,
  { events, model }: { events: AsyncIterable<ChatStreamEvent>; model: string },
): Promise<void> {
  const encoder = new ChunkEncoder(model);
  return streamEncoded({ request, reply }, events, {
    write: async (sse, event) => {
      for (const chunk of encoder.encode(event)) await sse.data(chunk);
    },
    onEnd: async () => undefined,
    onFailure: streamFailure,
  });
}

/** The fields a translated call goes without: the body's unnamed ones, and what decoding found (most requests: none). */
function withDecoded(unnamed: readonly string[], decoded: readonly string[] | undefined): readonly string[] {
  return decoded === undefined ? unnamed : [...unnamed, ...decoded];
}
