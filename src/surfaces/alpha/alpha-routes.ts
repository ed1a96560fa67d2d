import { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { effectiveCapabilities, type CatalogModel } from '../../catalog/catalog.ts';
import { nanosToUsd } from '../../domain/money.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import type { TextRun } from '../../gateway/text-generation.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { openSse } from '../../streaming/sse-writer.ts';
import { ChunkEncoder, chatCompletionOf, decodeChatMessages, gatedFields, relayBody, type ChatCompletionsBody } from './chat-completions-codec.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';

const ChatBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    messages: Type.Array(Type.Object({ role: Type.String({ minLength: 1 }), content: Type.Optional(Type.Unknown()) }), { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
    seed: Type.Optional(Type.Integer()),
    tools: Type.Optional(Type.Array(Type.Object({}))),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({})])),
    response_format: Type.Optional(Type.Object({})),
    provider: Type.Optional(Type.Object({})),
  },
  // The surface is a pass-through: fields it does not name are forwarded as given.
  { additionalProperties: true },
);

function pricingOf(model: CatalogModel): Record<string, unknown> {
  const pricing = model.pricing;
  if (!pricing) return {};
  const perMTok = (nanos: bigint | undefined) => (nanos === undefined ? undefined : nanosToUsd(nanos));
  const prices = { inputPerMTok: perMTok(pricing.inputNanosPerMTok), outputPerMTok: perMTok(pricing.outputNanosPerMTok), currency: 'USD' };
  return model.outputModalities.includes('embedding') ? { embeddingPricing: prices } : { chatPricing: prices };
}

export function alphaModelItem(model: CatalogModel): Record<string, unknown> {
  const capabilities = effectiveCapabilities(model);
  return {
    id: model.modelId,
    object: 'model',
    created: model.createdAt ? Math.floor(Date.parse(model.createdAt) / 1000) : 0,
    owned_by: 'gateway',
    name: model.name ?? model.modelId,
    inputModalities: model.inputModalities,
    outputModalities: model.outputModalities,
    capabilitiesProviderId: model.rows[0]?.providerId,
    ...(capabilities ? { capabilities } : {}),
    ...pricingOf(model),
  };
}

/** The alpha (chat-completions-style) surface. */
export const alphaRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  app.get('/api/alpha/v1/models', async () => ({ object: 'list', data: services.catalog.list().map(alphaModelItem) }));

  app.post('/api/alpha/v1/chat/completions', { schema: { body: ChatBody } }, async (request, reply) => {
    const body = request.body as ChatCompletionsBody;
    const principal = principalOf(request);
    const decoded = decodeChatMessages(body);
    const gatedParameters: Record<string, unknown> = {};
    for (const [field, native] of Object.entries(gatedFields)) if (body[field] !== undefined && body[field] !== null) gatedParameters[native] = body[field];
    const streaming = body.stream === true;
    const run = await services.text.start(
      { accountId: principal.accountId, apiKeyId: principal.kind === 'key' ? principal.apiKeyId : null },
      {
        modelId: body.model,
        messages: decoded.messages,
        maxTokens: body.max_completion_tokens ?? body.max_tokens,
        temperature: body.temperature,
        topP: body.top_p,
        stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined),
        seed: body.seed,
        gatedParameters,
        untranslatable: decoded.untranslatable,
        recordedRequest: { surface: 'alpha', endpoint: 'chat/completions', model: body.model, stream: streaming, messages: body.messages.length },
        relay: { protocol: 'openai', operation: 'chat-completions', streaming, prepare: (upstreamModel, dropped) => relayBody(body, upstreamModel, dropped) },
      },
    );
    if (run.droppedParameters.length > 0) reply.header('x-gateway-dropped-parameters', run.droppedParameters.join(','));
    if (run.kind === 'relay') return relayAnswer(request, reply, run, streaming);
    return streaming ? streamEvents(request, reply, run.events, body.model) : reply.send(chatCompletionOf(body.model, await collect(run.events)));
  });
};

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const all: ChatStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function streamEvents(request: FastifyRequest, reply: FastifyReply, events: AsyncIterable<ChatStreamEvent>, model: string): Promise<void> {
  const sse = openSse(reply);
  const encoder = new ChunkEncoder(model);
  try {
    for await (const event of events) for (const chunk of encoder.encode(event)) await sse.data(chunk);
    await sse.done();
  } catch (error) {
    request.log.warn({ err: error }, 'chat stream failed after it began');
    await sse.data({ error: { message: 'the upstream provider failed while streaming', type: 'upstream_error' } });
  } finally {
    sse.end();
  }
}

/** Same-protocol pass-through: bytes as they arrive; `[DONE]` appended when the upstream left it out. */
async function relayAnswer(request: FastifyRequest, reply: FastifyReply, run: Extract<TextRun, { kind: 'relay' }>, streaming: boolean): Promise<void> {
  if (!streaming) {
    // Streamed through as it arrives; if the client goes away the stream is destroyed, which still reads the
    // upstream to its end for billing.
    return reply.code(run.status).type(run.contentType ?? 'application/json').send(Readable.from(run.body));
  }
  const sse = openSse(reply);
  let tail = '';
  try {
    for await (const chunk of run.body) {
      await sse.raw(chunk);
      tail = (tail + Buffer.from(chunk).toString('latin1')).slice(-2);
    }
    const reading = run.reading();
    if (!reading.sawTerminator && !reading.sawError) await sse.raw(`${tail === '\n\n' ? '' : '\n\n'}data: [DONE]\n\n`);
  } catch (error) {
    request.log.warn({ err: error }, 'relayed chat stream failed after it began');
    await sse.raw(`${tail === '\n\n' ? '' : '\n\n'}data: ${JSON.stringify({ error: { message: 'the upstream provider failed while streaming', type: 'upstream_error' } })}\n\n`);
  } finally {
    sse.end();
  }
}
