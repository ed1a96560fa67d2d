import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogModel } from '../../catalog/catalog.ts';
import { answerEmbeddingsList, embeddingEncoding } from '../../gateway/embedding-list.ts';
import { compatModelFields } from '../../gateway/model-listing.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import { countPromptTokens } from '../../gateway/text-generation.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { reportDroppedParameters, unnamedFields } from '../../http/dropped-parameters.ts';
import { compatModelFieldSchemas } from '../../http/answer-schemas.ts';
import { ModelIdPath } from '../../http/schemas.ts';
import { described, jsonOrEventStream, relaysUpstreamErrors } from '../../http/openapi/route-documentation.ts';
import { EmbeddingsList } from '../../protocols/openai/embeddings.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';
import { passThroughEndings, relayAnswer, streamEncoded } from '../../streaming/relay.ts';
import type { SseWriter } from '../../streaming/sse-writer.ts';
import {
  BetaEmbeddingsRequest,
  CountTokensRequest,
  Message,
  MessageTokensCount,
  MessagesRequest,
  MessagesStreamEvent,
} from '../../protocols/anthropic/messages.ts';
import { decodeBetaEmbeddingInput } from './embeddings-codec.ts';
import {
  decodeMessages,
  fieldNamesOfBody,
  gatedParametersOf,
  ungatedParametersOf,
  MessageEventEncoder,
  messageOf,
  relayBody,
  threadOf,
} from './messages-codec.ts';
import {
  embeddingsListExample,
  embeddingsRequestExample,
  messageExample,
  messagesRequestExample,
  countTokensExample,
  countTokensRequestExample,
  modelExample,
  modelListExample,
} from './beta-examples.ts';

/** The services this surface uses, and only those. */
export type BetaServices = Pick<GatewayServices, 'authenticator' | 'catalog' | 'embeddings' | 'text'>;

/** The version and feature-flag headers of the imitated protocol, forwarded upstream when present. */
const forwardedHeaders = ['anthropic-version', 'anthropic-beta'] as const;

function protocolHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of forwardedHeaders) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') headers[name] = value;
  }
  return headers;
}

const ModelInfo = Type.Object({
  type: Type.Literal('model'),
  id: Type.String(),
  display_name: Type.String(),
  created_at: Type.String(),
  ...compatModelFieldSchemas,
});

const ModelList = Type.Object(
  {
    data: Type.Array(Type.Unsafe<Record<string, unknown>>(ModelInfo)),
    has_more: Type.Boolean(),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'The active models' },
);

function modelInfo(model: CatalogModel): Record<string, unknown> & { id: string } {
  return {
    type: 'model',
    id: model.modelId,
    display_name: model.name ?? model.modelId,
    created_at: model.createdAt ?? new Date(0).toISOString(),
    ...compatModelFields(model),
  };
}

const messageAnswer = jsonOrEventStream('The message; with `stream: true`, its named events', {
  json: Message,
  data: MessagesStreamEvent,
  ending: 'Each `data:` follows an `event:` line naming its type; the stream ends with message_stop (no [DONE]).',
});

/** The beta (messages-style) surface. */
export const betaRoutes: FastifyPluginAsyncTypebox<{ services: BetaServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  app.get(
    '/v1/models',
    {
      schema: {
        summary: 'The model list',
        description: "The catalog's active models in Anthropic's list shape (one page), with their modalities.",
        documentedExample: { answer: modelListExample },
        response: { 200: ModelList },
      },
    },
    async () => {
      const data = services.catalog.list().map(modelInfo);
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
  );

  app.get(
    '/v1/models/*',
    {
      schema: {
        summary: 'One model',
        description: "A catalog model in Anthropic's model shape; an unknown id answers 404.",
        documentedExample: { answer: modelExample },
        params: ModelIdPath,
        wildcardName: 'model_id',
        response: { 200: Type.Unsafe<Record<string, unknown>>({ ...ModelInfo, description: 'The model' }) },
      },
    },
    async (request) => modelInfo(services.catalog.get(request.params['*'])),
  );

  // A service extension: the alpha embeddings shape, with multimodal inputs.
  app.post(
    '/v1/embeddings',
    {
      schema: {
        summary: 'Embeddings, multimodal (a service extension)',
        description:
          "Not in Anthropic's API: the alpha embeddings shape, whose inputs may be text, images or video parts for a multimodal embedding model.",
        documentedExample: { request: embeddingsRequestExample, answer: embeddingsListExample },
        body: BetaEmbeddingsRequest,
        response: { 200: described(EmbeddingsList, 'One embedding per input, in input order') },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const encoding = embeddingEncoding(body.encoding_format);
      const { list, droppedParameters } = await answerEmbeddingsList(
        services.embeddings,
        requestContextOf(request, 'beta', 'embeddings'),
        { model: body.model, inputs: decodeBetaEmbeddingInput(body.input), dimensions: body.dimensions, encoding },
      );
      reportDroppedParameters(reply, droppedParameters);
      return list;
    },
  );

  app.post(
    '/v1/messages/count_tokens',
    {
      schema: {
        summary: "A prompt's input tokens, as the gateway counts them (nothing is charged)",
        description:
          'The input tokens of a messages request for any catalog text model, counted with the tokenizer billing uses (tools and images are not counted).',
        documentedExample: { request: countTokensRequestExample, answer: countTokensExample },
        body: CountTokensRequest,
        response: { 200: MessageTokensCount },
      },
    },
    async (request) => ({
      input_tokens: await services.text.countTokens(
        callerOf(request),
        request.body.model,
        () => decodeMessages(request.body).messages,
      ),
    }),
  );

  app.post(
    '/v1/messages',
    {
      schema: {
        summary: 'Messages',
        description:
          "Anthropic's messages API, served by any catalog text model (translated for providers of other protocols); `stream: true` answers its named server-sent events. Billed by the tokens used.",
        documentedExample: { request: messagesRequestExample, answer: messageExample },
        body: MessagesRequest,
        response: { 200: messageAnswer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const decoded = decodeMessages(body);
      const streaming = body.stream === true;
      const run = await services.text.start(requestContextOf(request, 'beta', 'messages'), {
        modelId: body.model,
        ...decoded,
        maxTokens: body.max_tokens,
        temperature: body.temperature,
        topP: body.top_p,
        stop: body.stop_sequences,
        untranslatable: [...threadOf(body), ...decoded.untranslatable],
        gatedParameters: gatedParametersOf(body),
        ungatedParameters: ungatedParametersOf(body),
        fieldNames: fieldNamesOfBody(body),
        // The end user's id in metadata has no place in the other protocols' requests.
        notTranslated: [
          ...(decoded.notTranslated ?? []),
          ...unnamedFields(body, MessagesRequest),
          ...(body.metadata ? ['metadata'] : []),
        ],

        recordedRequest: {
          surface: 'beta',
          endpoint: 'messages',
          model: body.model,
          stream: streaming,
          messages: body.messages.length,
        },
        whole: !streaming,
        relay: {
          protocol: 'anthropic',
          operation: 'messages',
          streaming,
          prepare: (terms) => relayBody(body, terms),
          headers: protocolHeaders(request),
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      // Events of an upstream of this protocol pass through unmodified, ending on its message_stop, or on the
      // error event when the upstream failed or closed before the message was complete.
      if (run.kind === 'relay')
        return relayAnswer({ request, reply }, run, {
          streaming,
          hooks: passThroughEndings(run.reading, streamFailure),
        });
      if (run.kind === 'whole') return reply.send(messageOf(body.model, run.answer));
      return streamEvents(request, reply, {
        events: run.events,
        encoder: new MessageEventEncoder(body.model, countPromptTokens(decoded.messages)),
      });
    },
  );
};

const streamError = { type: 'error', error: { type: 'api_error', message: midStreamFailure } };
/** The in-stream error event, on translated and pass-through streams alike. */
const streamFailure = (sse: SseWriter) => sse.event('error', streamError);

function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  { events, encoder }: { events: AsyncIterable<ChatStreamEvent>; encoder: MessageEventEncoder },
): Promise<void> {
  return streamEncoded({ request, reply }, events, {
    write: async (sse, event) => {
      for (const [name, payload] of encoder.encode(event)) await sse.event(name, payload);
    },
    onEnd: async () => undefined,
    onFailure: streamFailure,
  });
}
