import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { CatalogModel } from '../../catalog/catalog.ts';
import { answerEmbeddingsList, embeddingEncoding } from '../../gateway/embedding-list.ts';
import { compatModelFields } from '../../gateway/model-listing.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import type { RelayRun } from '../../gateway/text-generation.ts';
import { clientFieldNames, nativeParameters } from '../../catalog/capability-gate.ts';
import { requestContextOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { reportDroppedParameters, unnamedFields } from '../../http/dropped-parameters.ts';
import { compatModelFieldSchemas } from '../../http/answer-schemas.ts';
import { ModelIdPath } from '../../http/schemas.ts';
import { described, jsonOrEventStream, relaysUpstreamErrors } from '../../http/openapi/route-documentation.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';
import { passThroughEndings, relayAnswer, streamEncoded, type StreamRelayHooks } from '../../streaming/relay.ts';
import type { SseWriter } from '../../streaming/sse-writer.ts';
import {
  ChunkEncoder,
  chatCompletionOf,
  decodeChatMessages,
  gatedFields,
  relayBody,
} from './chat-completions-codec.ts';
import { decodeEmbeddingInput } from './embeddings-codec.ts';
import {
  decodeResponsesInput,
  gatedParametersOf as responsesGatedParameters,
  gatedFieldNamesOf as responsesFieldNames,
  relayBody as relayResponsesBody,
  ResponseEncoder,
} from './responses-codec.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionsRequest,
  type ProviderRouting,
} from '../../protocols/openai/chat-completions.ts';
import { EmbeddingsList, EmbeddingsRequest } from '../../protocols/openai/embeddings.ts';
import { ImagesAnswer, ImagesGenerateRequest, ImagesStreamEvent } from '../../protocols/openai/images.ts';
import {
  alphaImageInput,
  ImageEventEncoder,
  imageEventsOf,
  imagesResponseOf,
  untranslatedFields,
} from './images-codec.ts';
import {
  openAiOnlyResponsesFields,
  ResponseObject,
  ResponsesRequest,
  ResponsesStreamEvent,
} from '../../protocols/openai/responses.ts';
import {
  chatCompletionExample,
  chatRequestExample,
  embeddingsListExample,
  embeddingsRequestExample,
  imagesAnswerExample,
  imagesRequestExample,
  modelExample,
  modelListExample,
  responseObjectExample,
  responsesRequestExample,
} from './alpha-examples.ts';

/** The services this surface uses, and only those. */
export type AlphaServices = Pick<
  GatewayServices,
  'authenticator' | 'catalog' | 'config' | 'embeddings' | 'imageRequests' | 'images' | 'text'
>;

function alphaModelItem(model: CatalogModel): Record<string, unknown> {
  return {
    id: model.modelId,
    object: 'model',
    created: model.createdAt ? Math.floor(Date.parse(model.createdAt) / 1000) : 0,
    owned_by: 'gateway',
    ...compatModelFields(model),
  };
}

const ModelItem = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  ...compatModelFieldSchemas,
});

const ModelList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Type.Unsafe<Record<string, unknown>>(ModelItem)) },
  { description: 'The active models' },
);

const chatAnswer = jsonOrEventStream('The completion; with `stream: true`, its chunks', {
  json: ChatCompletion,
  data: ChatCompletionChunk,
  ending:
    'Always ends with `data: [DONE]` and carries a final usage chunk; a failure sends `data: {"error": ...}` and no [DONE].',
});
const responsesAnswer = jsonOrEventStream('The Response; with `stream: true`, its events', {
  json: ResponseObject,
  data: ResponsesStreamEvent,
  ending: 'Ends with `data: [DONE]` after its last event, except after a failure.',
});
const imagesAnswer = jsonOrEventStream(
  'The images; with `stream: true`, image_generation.* events where the provider streams them',
  {
    json: ImagesAnswer,
    data: ImagesStreamEvent,
    ending: 'Each `data:` follows an `event:` line naming its type.',
  },
);

/** `provider.allow_fallbacks: false` pins the call to the winning provider row. */
function allowsFallbacks(body: { provider?: Static<typeof ProviderRouting> }): boolean {
  return body.provider?.allow_fallbacks !== false;
}

/** The alpha (chat-completions-style) surface. */
export const alphaRoutes: FastifyPluginAsyncTypebox<{ services: AlphaServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  app.get(
    '/v1/models',
    {
      schema: {
        summary: 'The model list',
        description:
          "The catalog's active models in OpenAI's list shape, with their modalities (and prices where configured).",
        documentedExample: { answer: modelListExample },
        response: { 200: ModelList },
      },
    },
    async () => ({
      object: 'list' as const,
      data: services.catalog.list().map(alphaModelItem),
    }),
  );

  app.get(
    '/v1/models/*',
    {
      schema: {
        summary: 'One model',
        description: "A catalog model in OpenAI's model shape (`openai.models.retrieve`); an unknown id answers 404.",
        documentedExample: { answer: modelExample },
        params: ModelIdPath,
        wildcardName: 'model',
        response: { 200: Type.Unsafe<Record<string, unknown>>({ ...ModelItem, description: 'The model' }) },
      },
    },
    async (request) => alphaModelItem(services.catalog.get(request.params['*'])),
  );

  app.post(
    '/v1/chat/completions',
    {
      schema: {
        summary: 'Chat completions',
        description:
          "OpenAI's chat completions, served by any catalog text model (translated for providers of other protocols); `stream: true` answers server-sent chunks. Billed by the tokens used.",
        documentedExample: { request: chatRequestExample, answer: chatCompletionExample },
        body: ChatCompletionsRequest,
        response: { 200: chatAnswer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const decoded = decodeChatMessages(body);
      const streaming = body.stream === true;
      const run = await services.text.start(requestContextOf(request, 'alpha', 'chat/completions'), {
        modelId: body.model,
        ...decoded,
        maxTokens: body.max_completion_tokens ?? body.max_tokens,
        temperature: body.temperature,
        topP: body.top_p,
        stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined),
        seed: body.seed,
        choices: typeof body.n === 'number' ? body.n : undefined,
        gatedParameters: nativeParameters(body, gatedFields),
        fieldNames: {
          ...clientFieldNames(body, gatedFields),
          choices: 'n',
          structuredOutputs: 'response_format.json_schema.strict',
          strictTools: 'tools.function.strict',
        },
        notTranslated: [...(decoded.notTranslated ?? []), ...unnamedFields(body, ChatCompletionsRequest)],

        allowFallbacks: allowsFallbacks(body),
        recordedRequest: {
          surface: 'alpha',
          endpoint: 'chat/completions',
          model: body.model,
          stream: streaming,
          messages: body.messages.length,
        },
        whole: !streaming,
        relay: {
          protocol: 'openai',
          operation: 'chat-completions',
          streaming,
          prepare: (terms) => relayBody(body, terms),
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      if (run.kind === 'relay') return relayAnswer({ request, reply }, run, { streaming, hooks: chatStreamRules(run) });
      if (run.kind === 'whole') return reply.send(chatCompletionOf(body.model, run.answer));
      return streamEvents(request, reply, { events: run.events, model: body.model });
    },
  );

  app.post(
    '/v1/embeddings',
    {
      schema: {
        summary: 'Text embeddings (float or base64 vectors)',
        description:
          'One vector per input, from a catalog embedding model; `encoding_format: "base64"` (the SDKs\' default) answers each as little-endian float32 bytes.',
        documentedExample: { request: embeddingsRequestExample, answer: embeddingsListExample },
        body: EmbeddingsRequest,
        response: { 200: described(EmbeddingsList, 'One embedding per input, in input order') },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const encoding = embeddingEncoding(body.encoding_format);
      const { list, droppedParameters } = await answerEmbeddingsList(
        services.embeddings,
        requestContextOf(request, 'alpha', 'embeddings'),
        { model: body.model, inputs: decodeEmbeddingInput(body.input), dimensions: body.dimensions, encoding },
      );
      reportDroppedParameters(reply, droppedParameters);
      return list;
    },
  );

  app.post(
    '/v1/images/generations',
    {
      schema: {
        summary: 'Image generation',
        description:
          "OpenAI's images API for catalog image models: the images as base64 or links, or with `stream: true` partial and final image events where the provider streams them.",
        documentedExample: { request: imagesRequestExample, answer: imagesAnswerExample },
        body: ImagesGenerateRequest,
        response: { 200: imagesAnswer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const context = requestContextOf(request, 'alpha', 'images/generations');
      const streaming = body.stream === true;
      const run = await services.imageRequests.start(context, {
        modelId: body.model,
        streaming,
        relay: { body, numberOfImages: body.n ?? 1, quality: body.quality },
        decoded: alphaImageInput(body),
      });
      if (run.kind === 'relay') return relayAnswer({ request, reply }, run, { streaming });
      // A translated provider that streams image events (ModelArk) streams them, as OpenAI's events.
      if (run.kind === 'events') {
        reportDroppedParameters(reply, [...run.droppedParameters, ...untranslatedFields(body)]);
        const encoder = new ImageEventEncoder(Math.floor(Date.now() / 1000), body.output_format ?? 'jpeg');
        return streamEncoded({ request, reply }, run.events, {
          write: async (sse, event) => {
            for (const [name, payload] of encoder.encode(event)) await sse.event(name, payload);
          },
          onEnd: async () => undefined,
          onFailure: (sse) => sse.event('error', streamErrorEvent),
        });
      }
      // Other translated providers make images as jobs: the request waits for its job and answers in one JSON body,
      // or, asked to stream, in OpenAI's image events once the job is done (held and billed the same).
      const { generationId, droppedParameters } = run;
      reportDroppedParameters(reply, [...droppedParameters, ...untranslatedFields(body)]);
      const gone = new AbortController();
      request.raw.socket?.once('close', () => gone.abort());
      // OpenAI's image calls answer the images: the request waits for its job to end, however long it runs.
      const job = await services.images.waitFor(context, generationId, { signal: gone.signal });
      const view = await services.images.view(job, requestBaseUrl(request));
      if (view.status !== 'succeeded' || !view.result) {
        // A provider's refusal is relayed with its own status and body (a 400 the SDKs do not retry into new jobs).
        throw services.images.failureOf(
          job,
          `image generation ${generationId} ${view.status === 'failed' ? `failed: ${view.error}` : 'did not finish'}`,
        );
      }
      const created = Math.floor(job.createdAt.getTime() / 1000);
      const bytesOf = (index: number) => services.images.outputBytes(job, index);
      if (streaming) {
        const events = imageEventsOf(view.result, {
          created,
          outputFormat: body.output_format ?? 'png',
          bytesOf,
        });
        return streamEncoded({ request, reply }, events, {
          write: (sse, [name, payload]) => sse.event(name, payload),
          onEnd: async () => undefined,
          onFailure: (sse) => sse.event('error', streamErrorEvent),
        });
      }
      return imagesResponseOf(view.result, { created, responseFormat: body.response_format, bytesOf });
    },
  );

  app.post(
    '/v1/responses',
    {
      schema: {
        summary: 'Responses API',
        description:
          "OpenAI's Responses API, served by any catalog text model (translated for providers of other protocols); `stream: true` answers its server-sent events.",
        documentedExample: { request: responsesRequestExample, answer: responseObjectExample },
        body: ResponsesRequest,
        response: { 200: responsesAnswer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const decoded = decodeResponsesInput(body);
      const streaming = body.stream === true;
      const run = await services.text.start(requestContextOf(request, 'alpha', 'responses'), {
        modelId: body.model,
        ...decoded,
        maxTokens: body.max_output_tokens,
        temperature: body.temperature,
        topP: body.top_p,
        gatedParameters: responsesGatedParameters(body),
        fieldNames: responsesFieldNames(body),
        // Fields only OpenAI itself keeps, and the metadata no other protocol takes as it is written.
        notTranslated: [
          ...(decoded.notTranslated ?? []),
          ...unnamedFields(body, ResponsesRequest),
          ...[...openAiOnlyResponsesFields, 'metadata' as const].filter(
            (field) => body[field] !== undefined && body[field] !== null,
          ),
          // Built-in tools (web search...): the translated request goes without them, keeping its function tools.
          ...(body.tools?.some((tool) => tool.type !== 'function') ? ['tools'] : []),
        ],

        allowFallbacks: allowsFallbacks(body),
        recordedRequest: { surface: 'alpha', endpoint: 'responses', model: body.model, stream: streaming },
        whole: !streaming,
        relay: {
          protocol: 'openai',
          operation: 'responses',
          streaming,
          prepare: (terms) => relayResponsesBody(body, terms),
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      // Responses streams are piped raw, errors included, in the upstream's own format; `[DONE]` is added, or
      // the error event when the upstream failed or closed before the response was complete.
      if (run.kind === 'relay')
        return relayAnswer({ request, reply }, run, {
          streaming,
          hooks: passThroughEndings(
            run.reading,
            (sse) => relayedResponsesFailure(sse, run.reading().lastSequenceNumber),
            doneAppended,
          ),
        });
      const encoder = new ResponseEncoder(body.model, body);
      if (run.kind === 'whole') return reply.send(encoder.whole(run.answer));
      return streamEncoded({ request, reply }, run.events, {
        write: async (sse, event) => {
          for (const [name, payload] of encoder.events(event)) await sse.event(name, payload);
        },
        onEnd: (sse) => sse.done(),
        onFailure: (sse) => sse.event('error', encoder.failure('upstream_error', midStreamFailure)),
      });
    },
  );
};

const streamError = { error: { message: midStreamFailure, type: 'upstream_error' } };
/** The `error` event of OpenAI's image and Responses streams. */
const streamErrorEvent = { type: 'error', code: 'upstream_error', message: midStreamFailure, param: null };
/** The `error` event ending a relayed Responses stream: numbered after the upstream's last event, as clients check. */
const relayedResponsesFailure = (sse: SseWriter, lastSequenceNumber: number | undefined) =>
  sse.event('error', {
    ...streamErrorEvent,
    ...(lastSequenceNumber !== undefined ? { sequence_number: lastSequenceNumber + 1 } : {}),
  });

function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  { events, model }: { events: AsyncIterable<ChatStreamEvent>; model: string },
): Promise<void> {
  const encoder = new ChunkEncoder(model);
  return streamEncoded({ request, reply }, events, {
    write: async (sse, event) => {
      for (const chunk of encoder.encode(event)) await sse.data(chunk);
    },
    onEnd: (sse) => sse.done(),
    onFailure: (sse) => sse.data(streamError),
  });
}

/** `[DONE]` after a complete pass-through answer whose upstream left it out. */
async function doneAppended(sse: SseWriter, endsWithBlankLine: boolean): Promise<void> {
  await sse.raw(`${endsWithBlankLine ? '' : '\n\n'}data: [DONE]\n\n`);
}

/**
 * The chat stream rules for a pass-through: `[DONE]` appended when the upstream left it out, the error chunk
 * when it failed or closed before the answer was complete (`[DONE]` would pass the cut answer off as whole).
 */
function chatStreamRules(run: RelayRun): StreamRelayHooks {
  return passThroughEndings(run.reading, (sse) => sse.data(streamError), doneAppended);
}
