import type { ServerResponse } from 'node:http';
import { MultimodalEmbeddingsRequest, type ArkError, type MultimodalEmbeddingsAnswer } from '../../src/protocols/ark/multimodal-embeddings.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import { fakeVector, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { writeJson } from './wire.ts';

/**
 * A fake BytePlus ModelArk upstream speaking its multimodal embeddings protocol (see the ModelArk wire notes):
 * `POST /api/v3/embeddings/multimodal` fuses all of a call's inputs into one vector, so `data` is a single
 * object; usage counts one token per text word and 500 per image or video. Errors use the provider's
 * OpenAI-like body (`{error: {code, message, param, type}}`). The model `fake-error-<status>` fails with that
 * status, and so does a call whose text part is `fake-error-<status>` (one input of several failing). A body
 * that does not follow the protocol's request schema is answered 400 InvalidParameter.
 */
export const fakeArkKey = 'fake-ark-key';

interface MultimodalInput {
  type?: string;
  text?: string;
  image_url?: { url?: string };
  video_url?: { url?: string };
}

interface MultimodalBody {
  model?: string;
  input?: MultimodalInput[];
  encoding_format?: string;
  dimensions?: number;
}

const mediaTokens = 500;

function sendError(response: ServerResponse, status: number, code: string, message: string, param: string | null = null): void {
  const types: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 404: 'NotFound', 429: 'TooManyRequests' };
  const body = { error: { code, message, param, type: types[status] ?? 'InternalServiceError' } };
  writeJson<ArkError>(response, status, body, { 'x-request-id': 'fake-ark-request' });
}

const isMultimodalRequest = wireCheck(MultimodalEmbeddingsRequest);

function multimodal(request: RecordedRequest, response: ServerResponse): void {
  if (request.headers.authorization !== `Bearer ${fakeArkKey}`) return sendError(response, 401, 'AuthenticationError', 'The API key in the request is missing or invalid.');
  const body = request.body as MultimodalBody;
  const failing = body.input?.find?.((input) => input.type === 'text' && /^fake-error-\d{3}$/.test(input.text ?? ''))?.text;
  const failure = /^fake-error-(\d{3})$/.exec(failing ?? body.model ?? '');
  if (failure) return sendError(response, Number(failure[1]), 'InternalServiceError', `The fake failed with ${failure[1]}`);
  if (!Array.isArray(body.input) || body.input.length === 0) return sendError(response, 400, 'MissingParameter', 'The request failed because it is missing one or multiple required parameters.', 'input');
  if (!isMultimodalRequest(request.body)) return sendError(response, 400, 'InvalidParameter', 'One or more parameters specified in the request are not valid.');
  let textTokens = 0;
  let imageTokens = 0;
  for (const [index, input] of body.input.entries()) {
    if (input.type === 'text' && typeof input.text === 'string') textTokens += input.text.split(/\s+/).filter(Boolean).length;
    else if ((input.type === 'image_url' && input.image_url?.url) || (input.type === 'video_url' && input.video_url?.url)) imageTokens += mediaTokens;
    else return sendError(response, 400, 'InvalidParameter', 'One or more parameters specified in the request are not valid.', `input[${index}]`);
  }
  const seed = body.input.map((input) => input.text ?? input.image_url?.url?.slice(0, 64) ?? input.video_url?.url?.slice(0, 64)).join('|');
  const tokens = textTokens + imageTokens;
  const answer = {
    id: '021718fake',
    object: 'list',
    created: 1_743_575_435,
    model: body.model,
    data: { object: 'embedding', embedding: fakeVector(seed, body.dimensions ?? 8) },
    usage: { prompt_tokens: tokens, total_tokens: tokens, prompt_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens } },
  };
  writeJson<MultimodalEmbeddingsAnswer>(response, 200, answer, { 'x-request-id': 'fake-ark-request' });
}

export function startArkFake(): Promise<FakeServer> {
  return startFakeServer((request, response) => {
    if (request.method === 'POST' && request.path === '/api/v3/embeddings/multimodal') return multimodal(request, response);
    sendError(response, 404, 'InvalidEndpoint.NotFound', `Not found: ${request.method} ${request.path}`);
  });
}
