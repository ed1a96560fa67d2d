import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { requestContextOf, requireCredential } from '../../http/authentication.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';
import { streamEncoded } from '../../streaming/relay.ts';
import { reportDroppedParameters } from '../../http/dropped-parameters.ts';
import { eventStream, relaysUpstreamErrors } from '../../http/openapi/route-documentation.ts';
import { TextStreamEventSchema } from './answer-schemas.ts';
import { decodeParameters, optionalFieldNames, TextCompletionBody, textChunkOf } from './text-completion-codec.ts';
import { textCompletionExample, textStreamExample } from './native-examples.ts';

/** The services this surface uses, and only those. */
export type NativeTextServices = Pick<GatewayServices, 'authenticator' | 'text'>;

/** `POST /api/v1/text/completions`: always SSE of TextChunk objects, ending in `data: [DONE]`. */
export const nativeTextRoutes: FastifyPluginAsyncTypebox<{ services: NativeTextServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));

  const answer = eventStream(
    'The completion, streamed',
    TextStreamEventSchema,
    'The stream ends with `data: [DONE]`, or after a failure with an `error` event and no [DONE].',
  );
  app.post(
    '/text/completions',
    {
      schema: {
        summary: 'Text completion (always streamed)',
        description:
          'Completes the conversation with a catalog text model, as server-sent events of deltas, tool-call fragments and finally usage; billed by the tokens used.',
        documentedExample: { request: textCompletionExample, answer: textStreamExample },
        body: TextCompletionBody,
        response: { 200: answer },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const body = request.body;
      const gatedParameters: Record<string, unknown> = { temperature: body.temperature, maxTokens: body.maxTokens };
      for (const name of optionalFieldNames) gatedParameters[name] = body[name];
      const run = await services.text.start(requestContextOf(request, 'native', 'text/completions'), {
        modelId: body.model,
        messages: body.messages,
        ...decodeParameters(body),
        gatedParameters,
        // The native fields are named as the parameters are, but strictness asked in a format or a tool.
        fieldNames: {
          structuredOutputs:
            body.structuredOutputs === undefined ? 'responseFormat.json_schema.strict' : 'structuredOutputs',
          strictTools: 'tools.function.strict',
        },
        recordedRequest: {
          surface: 'native',
          model: body.model,
          messages: body.messages.length,
          maxTokens: body.maxTokens,
          temperature: body.temperature,
        },
      });
      reportDroppedParameters(reply, run.droppedParameters);
      return streamEncoded({ request, reply }, run.events, {
        write: (sse, event) => sse.data(textChunkOf(event)),
        noBuffering: true,
        onEnd: (sse) => sse.done(),
        onFailure: (sse) => sse.data({ error: midStreamFailure }),
      });
    },
  );
};
