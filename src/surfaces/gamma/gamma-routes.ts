import { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { compatModelFields } from '../../gateway/model-listing.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { collectAnswer } from '../../gateway/text-generation.ts';
import { requestContextOf, requireCredential } from '../../http/authentication.ts';
import { reportDroppedParameters } from '../../http/dropped-parameters.ts';
import { passThroughEndings, relayAnswer, streamEncoded } from '../../streaming/relay.ts';
import type { SseWriter } from '../../streaming/sse-writer.ts';
import { compatModelFieldSchemas } from '../../http/answer-schemas.ts';
import { eventStreamSchema, jsonBody, relaysUpstreamErrors } from '../../http/openapi/route-documentation.ts';
import { bodyValidator } from '../../http/validation.ts';
import {
  BatchEmbedContentsRequest,
  BatchEmbedContentsResponse,
  EmbedContentRequest,
  EmbedContentResponse,
} from '../../protocols/gemini/embed-content.ts';
import { GenerateContentRequest, GenerateContentResponse } from '../../protocols/gemini/generate-content.ts';
import {
  decodeBatchEmbedContents,
  decodeEmbedContent,
  type BatchEmbedContentsBody,
  type EmbedContentBody,
} from './embed-content-codec.ts';
import {
  ChunkEncoder,
  decodeContents,
  gatedParametersOf,
  relayBody,
  responseOf,
  streamError,
  type GenerateContentBody,
} from './generate-content-codec.ts';

/** The services this surface uses, and only those. */
export type GammaServices = Pick<GatewayServices, 'authenticator' | 'catalog' | 'embeddings' | 'text'>;

const generateContentBody = bodyValidator<GenerateContentBody>(GenerateContentRequest);
const embedContentBody = bodyValidator<EmbedContentBody>(EmbedContentRequest);
const batchBody = bodyValidator<BatchEmbedContentsBody>(BatchEmbedContentsRequest);

const actions = ['generateContent', 'streamGenerateContent', 'embedContent', 'batchEmbedContents'] as const;
type Action = (typeof actions)[number];

/** `models/{model}:{action}`: the model is the catalog id, which may itself contain slashes. */
function parseModelPath(path: string): { modelId: string; action: Action } {
  const separator = path.lastIndexOf(':');
  const action = path.slice(separator + 1);
  if (separator <= 0 || !(actions as readonly string[]).includes(action)) {
    throw new GatewayError(
      'GW_ROUTE_NOT_FOUND',
      `unknown model action "${separator < 0 ? path : action}": use ${actions.join(', ')}`,
    );
  }
  return { modelId: path.slice(0, separator), action: action as Action };
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
    models: Type.Array(
      Type.Object({
        name: Type.String(),
        displayName: Type.String(),
        supportedGenerationMethods: Type.Array(Type.String()),
      }),
      { description: "The protocol's own list, which the official SDK reads" },
    ),
  },
  { description: 'The active models' },
);

const modelAction = `\`<model>:<action>\`, the action one of ${actions.join(', ')}; the model is a catalog id and may contain slashes`;

/** One route serves four actions: each has the protocol's own body, checked once the path has said which. */
const actionBody = jsonBody(
  Type.Union([GenerateContentRequest, EmbedContentRequest, BatchEmbedContentsRequest]),
  'generateContent and streamGenerateContent: a GenerateContentRequest; embedContent: an EmbedContentRequest; batchEmbedContents: a BatchEmbedContentsRequest',
);

const actionAnswer = {
  description:
    'generateContent: the response; streamGenerateContent: with `alt=sse` server-sent events of response chunks (the stream simply ends), without it one JSON array of them; ' +
    'embedContent: one embedding; batchEmbedContents: one per request, in order',
  content: {
    'application/json': {
      schema: Type.Union([
        GenerateContentResponse,
        Type.Array(GenerateContentResponse),
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

/** The gamma (generateContent-style) surface. */
export const gammaRoutes: FastifyPluginAsyncTypebox<{ services: GammaServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptGoogleKeyHeader: true }));

  app.get('/v1beta/models', { schema: { summary: 'The model list', response: { 200: ModelList } } }, async () => {
    const models = services.catalog.list();
    return {
      data: models.map((model) => ({
        id: `${model.rows[0]?.providerId}/${model.modelId}`,
        ...compatModelFields(model),
      })),
      // The protocol's own list shape, which the official SDK reads.
      models: models.map((model) => ({
        name: `models/${model.modelId}`,
        displayName: model.name ?? model.modelId,
        supportedGenerationMethods: model.outputModalities.includes('embedding')
          ? ['embedContent', 'batchEmbedContents']
          : ['generateContent', 'streamGenerateContent'],
      })),
    };
  });

  app.post(
    '/v1beta/models/*',
    // Each action has its own body, checked once the path has said which action it is.
    {
      schema: {
        summary: 'generateContent, streamGenerateContent, embedContent or batchEmbedContents of a model',
        params: Type.Object({ '*': Type.String({ maxLength: 400, description: modelAction }) }),
        wildcardName: 'modelAction',
        querystring: Type.Object({ alt: Type.Optional(Type.Literal('sse')) }),
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
        const vectors = answer.vectors.map((values) => ({ values }));
        return action === 'embedContent' ? { embedding: vectors[0] } : { embeddings: vectors };
      }
      const body = generateContentBody(request.body);
      const decoded = decodeContents(body);
      const streaming = action === 'streamGenerateContent';
      const sse = request.query.alt === 'sse';
      const config = body.generationConfig ?? {};
      const run = await services.text.start(requestContextOf(request, 'gamma', action), {
        modelId,
        ...decoded,
        maxTokens: config.maxOutputTokens as number | undefined,
        temperature: config.temperature as number | undefined,
        topP: config.topP as number | undefined,
        stop: config.stopSequences as string[] | undefined,
        choices: config.candidateCount as number | undefined,
        gatedParameters: gatedParametersOf(body),
        recordedRequest: { surface: 'gamma', endpoint: action, model: modelId, stream: streaming },
        relay: {
          protocol: 'gemini',
          operation: !streaming
            ? 'generate-content'
            : sse
              ? 'stream-generate-content-sse'
              : 'stream-generate-content-json',
          streaming: streaming && sse,
          prepare: (_upstreamModel, dropped, limit) => relayBody(body, dropped, limit),
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      // Chunks of an upstream of this protocol pass through as they came; an event stream the upstream failed or
      // closed before its last chunk (the one with a finish reason) ends with the error chunk.
      if (run.kind === 'relay')
        return relayAnswer(request, reply, run, streaming && sse, passThroughEndings(run.reading, streamFailure));
      if (!streaming) return reply.send(responseOf(modelId, await collectAnswer(run.events)));
      if (sse) return streamSse(request, reply, run.events, modelId);
      // A client that leaves before the array's first element destroys a generator that never started, whose
      // own cleanup then never runs: the events are let go here, so the rest is still read and billed.
      const events = run.events[Symbol.asyncIterator]();
      if (reply.raw.destroyed) void events.return?.();
      else reply.raw.once('close', () => void events.return?.());
      return reply
        .type('application/json')
        .send(Readable.from(jsonArray(request, { [Symbol.asyncIterator]: () => events }, modelId)));
    },
  );
};

/** The in-stream error chunk, on translated and pass-through event streams alike. */
const streamFailure = (sse: SseWriter) => sse.data(streamError);

function streamSse(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<ChatStreamEvent>,
  model: string,
): Promise<void> {
  const encoder = new ChunkEncoder(model);
  return streamEncoded(
    request,
    reply,
    events,
    async (sse, event) => {
      for (const chunk of encoder.encode(event)) await sse.data(chunk);
    },
    {
      onEnd: async () => undefined,
      onFailure: streamFailure,
    },
  );
}

/** The protocol's stream without `alt=sse`: one JSON array written element by element. */
async function* jsonArray(
  request: FastifyRequest,
  events: AsyncIterable<ChatStreamEvent>,
  model: string,
): AsyncGenerator<string> {
  const encoder = new ChunkEncoder(model);
  let separator = '[';
  try {
    for await (const event of events) {
      for (const chunk of encoder.encode(event)) {
        yield `${separator}${JSON.stringify(chunk)}`;
        separator = ',\r\n';
      }
    }
  } catch (error) {
    request.log.warn({ err: error }, 'stream failed after it began');
    yield `${separator}${JSON.stringify(streamError)}`;
  }
  yield separator === '[' ? '[]' : ']';
}
