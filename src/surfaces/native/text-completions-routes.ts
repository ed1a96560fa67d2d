import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requireCredential } from '../../http/authentication.ts';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';
import { streamEncoded } from '../../streaming/relay.ts';
import { reportDroppedParameters } from '../../http/dropped-parameters.ts';

const Message = Type.Object(
  { role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]), content: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

/** Model-dependent fields forwarded when the model accepts them (spec: Native: text completion). */
const optionalFields = {
  topP: Type.Number({ minimum: 0, maximum: 1 }),
  stop: Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 })]),
  tools: Type.Array(Type.Unknown()),
  toolChoice: Type.Unknown(),
  responseFormat: Type.Unknown(),
  seed: Type.Integer(),
  presencePenalty: Type.Number({ minimum: -2, maximum: 2 }),
  frequencyPenalty: Type.Number({ minimum: -2, maximum: 2 }),
  topK: Type.Integer({ minimum: 0 }),
  repetitionPenalty: Type.Number({ minimum: 0 }),
  minP: Type.Number({ minimum: 0, maximum: 1 }),
  topA: Type.Number({ minimum: 0, maximum: 1 }),
  logprobs: Type.Boolean(),
  topLogprobs: Type.Integer({ minimum: 0, maximum: 20 }),
  logitBias: Type.Record(Type.String(), Type.Number()),
  structuredOutputs: Type.Boolean(),
  parallelToolCalls: Type.Boolean(),
  includeReasoning: Type.Boolean(),
  reasoningEffort: Type.String(),
  webSearchOptions: Type.Unknown(),
  verbosity: Type.String(),
  thinking: Type.Unknown(),
};

const TextCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    messages: Type.Array(Message, { minItems: 1 }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    ...Object.fromEntries(Object.entries(optionalFields).map(([name, schema]) => [name, Type.Optional(schema)])),
  },
  { additionalProperties: false },
);

type TextCompletionBody = Static<typeof TextCompletionBody> & Partial<Record<keyof typeof optionalFields, unknown>>;

/** The spec's TextChunk for a canonical event; tool calls have no TextChunk form (this surface sends no tools to carry). */
function textChunkOf(event: ChatStreamEvent): object | undefined {
  if (event.type === 'text-delta') return { delta: event.text };
  if (event.type !== 'finish') return undefined;
  const usage = event.usage && {
    promptTokens: event.usage.inputTokens,
    completionTokens: event.usage.outputTokens,
    totalTokens: event.usage.inputTokens + event.usage.outputTokens,
  };
  return { delta: '', finishReason: event.finishReason.unified, ...(usage ? { usage } : {}) };
}

/** `POST /api/v1/text/completions`: always SSE of TextChunk objects, ending in `data: [DONE]`. */
export const nativeTextRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  app.post('/api/v1/text/completions', { schema: { body: TextCompletionBody } }, async (request, reply) => {
    const body = request.body as TextCompletionBody;
    const gatedParameters: Record<string, unknown> = { temperature: body.temperature, maxTokens: body.maxTokens };
    for (const name of Object.keys(optionalFields)) gatedParameters[name] = body[name as keyof typeof optionalFields];
    const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop as string[] | undefined);
    const run = await services.text.start(
      callerOf(request),
      {
        modelId: body.model,
        messages: body.messages,
        maxTokens: body.maxTokens,
        temperature: body.temperature,
        topP: body.topP as number | undefined,
        stop,
        seed: body.seed as number | undefined,
        gatedParameters,
        recordedRequest: { surface: 'native', model: body.model, messages: body.messages.length, maxTokens: body.maxTokens, temperature: body.temperature },
      },
    );
    reportDroppedParameters(reply, run.droppedParameters);
    return streamEncoded(request, reply, run.events, async (sse, event) => {
      const chunk = textChunkOf(event);
      if (chunk) await sse.data(chunk);
    }, {
      noBuffering: true,
      onEnd: (sse) => sse.done(),
      onFailure: (sse) => sse.data({ error: midStreamFailure }),
    });
  });
};
