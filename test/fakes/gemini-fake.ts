import type { ServerResponse } from 'node:http';
import type { Content, Part } from '../../src/protocols/gemini/content.ts';
import {
  BatchEmbedContentsRequest,
  EmbedContentRequest,
  type BatchEmbedContentsResponse,
} from '../../src/protocols/gemini/embed-content.ts';
import {
  GenerateContentRequest,
  wireLogprobsResult,
  type GeminiError,
  type GenerateContentResponse,
} from '../../src/protocols/gemini/generate-content.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import { fakeVector, sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { fakeTokenLogprob } from './fake-logprobs.ts';
import { jsonAnswer, toolArguments } from './structured-answer.ts';
import { writeJson } from './wire.ts';

/**
 * A fake Gemini upstream speaking the real generateContent wire format (see the Gemini wire notes): JSON
 * answers; `:streamGenerateContent?alt=sse` as `data:` events separated by CRLF CRLF with no terminator;
 * `:streamGenerateContent` without `alt` as one incrementally written JSON array; Google RPC error bodies
 * (a bad key is 400 INVALID_ARGUMENT). The model name picks the scenario:
 * - `fake-error-<status>`: that status with a Google RPC error body;
 * - `fake-cut`: the stream closes after the first chunk, before any finishReason;
 * - `fake-thinking`: reports 7 thinking tokens in thoughtsTokenCount;
 * - `fake-blocked`: blocks the prompt: no candidates, `promptFeedback.blockReason` SAFETY (one chunk when streamed);
 * anything else answers "Echo: <last user text>", one word per chunk; asked for JSON (`responseMimeType`
 * application/json), that text inside a value of `responseJsonSchema` or `responseSchema` (structured-answer.ts);
 * with `candidateCount`, that many identical candidates, each billed; with `responseLogprobs`, each word's
 * `logprobsResult` (`logprobs` alternatives at each place). With function declarations (and a
 * mode other than NONE) it calls the first allowed function with arguments following its declared parameters
 * (structured-answer.ts: strings are the last user text; `{"query": <last user text>}` for a schema of no
 * properties), whole in one chunk with finishReason STOP as the real API does (a `gemini-3...` model signs it with `thoughtSignature`, and
 * refuses a conversation that replays a turn of calls unsigned, as Gemini 3 does); after functionResponse parts it answers
 * "Echo: <the JSON of the last response>", except in ANY mode, where it calls again (the first allowed function
 * the turn before did not call, or the first), as the real API's model always calls in that mode. `:embedContent` and `:batchEmbedContents` answer fake vectors.
 * A body that does not follow the protocol's request schema is answered 400 INVALID_ARGUMENT. A file by an address
 * ending in `-<n>` (`fileData.fileUri`) is billed n input tokens, a stand-in for what the real API bills for a
 * video's or a document's content; a `googleSearch` or `urlContext` tool reads what it finds, billed as the real
 * API reports it, `retrievedTokens` in `toolUsePromptTokenCount`.
 */
export const fakeGeminiKey = 'fake-gemini-key';

/** Tool-use prompt tokens of what a search tool finds (see the header). */
export const retrievedTokens = 250_000;

/** Input tokens of the files the contents name by addresses ending in `-<n>` (see the header). */
const fileTokens = (contents: readonly Content[]) =>
  contents
    .flatMap((content) => content.parts)
    .reduce((sum, part) => sum + Number(/-(\d+)$/.exec(part.fileData?.fileUri ?? '')?.[1] ?? 0), 0);

const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const jsonType = { 'content-type': 'application/json; charset=UTF-8' };

function sendError(response: ServerResponse, code: number, message: string): void {
  const body: GeminiError = { error: { code, message, status: statusNames[code] ?? 'UNKNOWN' } };
  writeJson(response, { status: code, body, headers: jsonType });
}

const badKeyMessage = 'API key not valid. Please pass a valid API key.';

/** Google's answer to a wrong key: 400, its reason (API_KEY_INVALID) and message told in the error's details. */
function refuseKey(response: ServerResponse): void {
  const details = [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: badKeyMessage },
  ];
  const error = { code: 400, message: badKeyMessage, status: 'INVALID_ARGUMENT', details };
  writeJson<GeminiError>(response, { status: 400, body: { error }, headers: jsonType });
}

const isGenerateRequest = wireCheck(GenerateContentRequest);
const isEmbedRequest = wireCheck(EmbedContentRequest);
const isBatchEmbedRequest = wireCheck(BatchEmbedContentsRequest);
const invalidBody = 'Invalid JSON payload received: the body does not follow the request schema.';

/** The request as the fake reads it: the upstream takes `contents` only in the protocol's own list form. */
type GenerateBody = GenerateContentRequest & { contents: Content[] };
const isGenerateBody = (body: unknown): body is GenerateBody =>
  isGenerateRequest(body) && typeof body.contents !== 'string';

/** The names of the functions the last model turn called: those whose responses the turn after it gives. */
function calledBefore(contents: readonly Content[]): Set<string> {
  const turn = contents.findLast((content) => content.role === 'model');
  return new Set((turn?.parts ?? []).flatMap((part) => (part.functionCall ? [part.functionCall.name] : [])));
}

/**
 * The function the fake calls, or none when the request declares none or forbids calls. A turn answering calls
 * with their responses is answered in words, unless the mode is ANY, in which the model always calls (as the real
 * API's does): then the first allowed function the last turn did not call (a model moving on), or the first.
 */
function chosenFunction(body: GenerateBody, answersCalls: boolean): string | undefined {
  const declared = (body.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  const config = body.toolConfig?.functionCallingConfig;
  if (declared.length === 0 || config?.mode === 'NONE') return undefined;
  const named = config?.allowedFunctionNames ?? [];
  const allowed = named.length > 0 ? named : declared.map((declaration) => declaration.name);
  if (!answersCalls) return allowed[0];
  if (config?.mode !== 'ANY') return undefined;
  const called = calledBefore(body.contents);
  return allowed.find((name) => !called.has(name)) ?? allowed[0];
}

/** The parameters of the function declared as `name`: JSON Schema, or the API's OpenAPI subset. */
function parametersOf(body: GenerateBody, name: string): unknown {
  const declaration = (body.tools ?? [])
    .flatMap((tool) => tool.functionDeclarations ?? [])
    .find((candidate) => candidate.name === name);
  return declaration?.parametersJsonSchema ?? declaration?.parameters;
}

/** What the fake signs a turn of calls with (base64, as the real signatures are). */
export const fakeThoughtSignature = Buffer.from('fake reasoning state ~~~ of this turn ???').toString('base64');

/**
 * Gemini 3 and later refuse a conversation whose turn of calls comes back without its signature, on its first
 * call; Google's stand-in passes. The message is the real API's.
 */
function unsignedCall(contents: readonly Content[]): string | undefined {
  for (const [position, content] of contents.entries()) {
    const calls = content.parts.filter((part) => part.functionCall !== undefined);
    if (content.role !== 'model' || calls.length === 0 || calls[0]!.thoughtSignature !== undefined) continue;
    return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${calls[0]!.functionCall!.name}\` , position ${position + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
  }
  return undefined;
}

/** A value as the protocol's shape it is sent as (a value built beforehand may carry the provider's own extra fields). */
const typed = <T>(value: T): T => value;
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);
const textOf = (parts: readonly Part[] | undefined) =>
  (parts ?? [])
    .map((part) => part.text ?? (part.functionResponse ? JSON.stringify(part.functionResponse.response) : ''))
    .join('');

async function generate(
  request: RecordedRequest,
  response: ServerResponse,
  { model, action, alt }: { model: string; action: string; alt: string | null },
): Promise<void> {
  if (request.headers['x-goog-api-key'] !== fakeGeminiKey) return refuseKey(response);
  const failure = /^fake-error-(\d{3})$/.exec(model);
  if (failure) return sendError(response, Number(failure[1]), `The fake failed with ${failure[1]}`);
  const body = request.body;
  if (!isGenerateBody(body)) return sendError(response, 400, invalidBody);
  const both = (body.tools ?? [])
    .flatMap((tool) => tool.functionDeclarations ?? [])
    .find((declaration) => declaration.parameters && declaration.parametersJsonSchema);
  if (both)
    return sendError(
      response,
      400,
      `function_declarations[${both.name}]: parameters and parameters_json_schema cannot both be set`,
    );
  const unsigned = model.startsWith('gemini-3') ? unsignedCall(body.contents) : undefined;
  if (unsigned) return sendError(response, 400, unsigned);
  const lastUser = body.contents.filter((content) => content.role !== 'model').at(-1);
  const calledFunction = chosenFunction(
    body,
    (lastUser?.parts ?? []).some((part) => part.functionResponse),
  );
  const echo = `Echo: ${textOf(lastUser?.parts)}`;
  const config = body.generationConfig;
  const schema = config?.responseJsonSchema ?? config?.responseSchema;
  let words = wordsOf(config?.responseMimeType === 'application/json' ? jsonAnswer(schema, echo) : echo);
  const candidates = Array.from({ length: config?.candidateCount ?? 1 }, (_, index) => index);
  // Asked for, each word's log probability (and its likeliest alternatives) as the protocol writes them.
  const logprobsOf = (pieces: readonly string[], first: number) =>
    config?.responseLogprobs === true
      ? {
          logprobsResult: wireLogprobsResult(
            pieces.map((piece, offset) =>
              fakeTokenLogprob(piece, { place: first + offset, top: config.logprobs ?? 0 }),
            ),
          ),
        }
      : {};
  let finishReason = 'STOP';
  const max = body.generationConfig?.maxOutputTokens;
  if (max !== undefined && words.length > max) {
    words = words.slice(0, max);
    finishReason = 'MAX_TOKENS';
  }
  const promptTokenCount =
    body.contents.reduce((sum, content) => sum + wordsOf(textOf(content.parts)).length, 0) +
    wordsOf(typeof body.systemInstruction === 'string' ? body.systemInstruction : textOf(body.systemInstruction?.parts))
      .length +
    fileTokens(body.contents);
  const thoughts = model === 'fake-thinking' ? { thoughtsTokenCount: 7 } : {};
  const searches = (body.tools ?? []).some((tool) => tool.googleSearch !== undefined || tool.urlContext !== undefined);
  const toolUse = searches ? retrievedTokens : 0;
  const finalUsage = {
    promptTokenCount,
    candidatesTokenCount: words.length * candidates.length,
    ...thoughts,
    ...(searches ? { toolUsePromptTokenCount: toolUse } : {}),
    totalTokenCount:
      promptTokenCount + toolUse + words.length * candidates.length + (model === 'fake-thinking' ? 7 : 0),
  };
  const common = { modelVersion: model, responseId: 'fakeResponseId01' };
  const sse = alt === 'sse';
  if (model === 'fake-blocked') {
    const blocked = {
      promptFeedback: {
        blockReason: 'SAFETY',
        safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
      },
      usageMetadata: { promptTokenCount, totalTokenCount: promptTokenCount },
      ...common,
    };
    if (action === 'generateContent')
      return writeJson<GenerateContentResponse>(response, { status: 200, body: blocked, headers: jsonType });
    const whole = JSON.stringify(typed<GenerateContentResponse>(blocked));
    response.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8' });
    response.end(sse ? `data: ${whole}\r\n\r\n` : `[${whole}]`);
    return;
  }
  if (calledFunction) {
    const call = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              {
                functionCall: {
                  name: calledFunction,
                  args: toolArguments(parametersOf(body, calledFunction), textOf(lastUser?.parts)),
                },
                ...(model.startsWith('gemini-3') ? { thoughtSignature: fakeThoughtSignature } : {}),
              },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    };
    const usageMetadata = { promptTokenCount, candidatesTokenCount: 5, totalTokenCount: promptTokenCount + 5 };
    response.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8' });
    const answer = { ...call, usageMetadata, ...common };
    const whole = JSON.stringify(typed<GenerateContentResponse>(answer));
    response.end(action === 'generateContent' ? whole : sse ? `data: ${whole}\r\n\r\n` : `[${whole}]`);
    return;
  }
  if (action === 'generateContent') {
    const answer = {
      candidates: candidates.map((index) => ({
        content: { role: 'model', parts: [{ text: words.join(' ') }] },
        finishReason,
        ...candidateIndex(index),
        ...logprobsOf(
          words.map((word, place) => (place === 0 ? word : ` ${word}`)),
          0,
        ),
      })),
      usageMetadata: finalUsage,
      ...common,
    };
    return writeJson<GenerateContentResponse>(response, { status: 200, body: answer, headers: jsonType });
  }
  const chunks = words.map((word, index) => {
    const last = index === words.length - 1;
    const piece = index === 0 ? word : ` ${word}`;
    const chunk = {
      candidates: candidates.map((candidate) => ({
        content: { role: 'model', parts: [{ text: piece }] },
        ...(last ? { finishReason } : {}),
        ...candidateIndex(candidate),
        ...logprobsOf([piece], index),
      })),
      usageMetadata: last ? finalUsage : { promptTokenCount, totalTokenCount: promptTokenCount },
      ...common,
    };
    return typed<GenerateContentResponse>(chunk);
  });
  response.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8' });
  if (!sse) response.write('[');
  for (const [index, chunk] of chunks.entries()) {
    if (sse) response.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    else response.write(`${index === 0 ? '' : ',\r\n'}${JSON.stringify(chunk)}`);
    if (model === 'fake-cut') {
      await sleep(50);
      response.socket?.destroy();
      return;
    }
  }
  response.end(sse ? undefined : ']');
}

/** One content to embed, as either action names it (`:embedContent` may leave `content` out). */
type EmbedRequest = Partial<BatchEmbedContentsRequest['requests'][number]>;

/** The vector of one content: its text and the media types of its inline parts, at the asked size (8 by default). */
function embeddingOf(request: EmbedRequest): { values: number[] } {
  const parts = request.content?.parts ?? [];
  const seed = parts
    .map((part) => part.text ?? `${part.inlineData?.mimeType}:${part.inlineData?.data?.length}`)
    .join('|');
  return { values: fakeVector(seed, request.outputDimensionality ?? 8) };
}

/**
 * `:embedContent` and `:batchEmbedContents` as the real API answers them: no usage, vectors in request order;
 * every batch request must name the path's model as `models/<id>`, and carry content parts.
 */
function embed(
  request: RecordedRequest,
  response: ServerResponse,
  { model, action }: { model: string; action: string },
): void {
  if (request.headers['x-goog-api-key'] !== fakeGeminiKey) {
    refuseKey(response);
    return;
  }
  const failure = /^fake-error-(\d{3})$/.exec(model);
  if (failure) {
    sendError(response, Number(failure[1]), `The fake failed with ${failure[1]}`);
    return;
  }
  const body = request.body;
  const requests: EmbedRequest[] | undefined =
    action === 'embedContent'
      ? isEmbedRequest(body)
        ? [body]
        : undefined
      : isBatchEmbedRequest(body)
        ? body.requests
        : undefined;
  if (requests === undefined) {
    sendError(response, 400, invalidBody);
    return;
  }
  if (requests.length === 0) {
    sendError(response, 400, '* BatchEmbedContentsRequest.requests: contents is not specified');
    return;
  }
  for (const [index, item] of requests.entries()) {
    if (action === 'batchEmbedContents' && item.model !== `models/${model}`) {
      sendError(
        response,
        400,
        `* BatchEmbedContentsRequest.requests[${index}].model: Model names must match the model in the URL`,
      );
      return;
    }
    if (!item.content?.parts?.length) {
      sendError(
        response,
        400,
        `* BatchEmbedContentsRequest.requests[${index}].content.parts: contents is not specified`,
      );
      return;
    }
  }
  if (action === 'embedContent') {
    writeJson(response, { status: 200, body: { embedding: embeddingOf(requests[0]!) }, headers: jsonType });
    return;
  }
  const answer = { embeddings: requests.map(embeddingOf) };
  writeJson<BatchEmbedContentsResponse>(response, { status: 200, body: answer, headers: jsonType });
}

/** A candidate's index as Google writes it: proto3 JSON leaves out a zero, so the first candidate carries none. */
function candidateIndex(index: number): { index?: number } {
  return index > 0 ? { index } : {};
}

export function startGeminiFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    const url = new URL(request.path, 'http://fake');
    const match =
      /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/.exec(
        url.pathname,
      );
    if (request.method === 'POST' && match && (match[2] === 'embedContent' || match[2] === 'batchEmbedContents'))
      return embed(request, response, { model: decodeURIComponent(match[1]!), action: match[2]! });
    if (request.method === 'POST' && match)
      return generate(request, response, {
        model: decodeURIComponent(match[1]!),
        action: match[2]!,
        alt: url.searchParams.get('alt'),
      });
    sendError(response, 404, `Method not found: ${request.method} ${url.pathname}`);
  });
}
