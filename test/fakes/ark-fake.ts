import type { ServerResponse } from 'node:http';
import {
  MultimodalEmbeddingsRequest,
  type ArkError,
  type MultimodalEmbeddingsAnswer,
} from '../../src/protocols/ark/multimodal-embeddings.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import {
  SeedreamRequest,
  type SeedreamAnswer,
  type SeedreamItem,
  type SeedreamStreamEvent,
} from '../../src/protocols/ark/images.ts';
import { delayFor, FakeFiles, fakePng, notAnImagePage, scenarioOf } from './fake-images.ts';
import { fakeVector, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { SeedanceTasks } from './seedance-tasks.ts';
import { sseEvent, writeJson } from './wire.ts';

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

function sendError(
  response: ServerResponse,
  status: number,
  {
    code,
    message,
    param = null,
    headers = {},
  }: { code: string; message: string; param?: string | null; headers?: Record<string, string> },
): void {
  const types: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    404: 'NotFound',
    429: 'TooManyRequests',
  };
  const body = { error: { code, message, param, type: types[status] ?? 'InternalServiceError' } };
  writeJson<ArkError>(response, { status, body, headers: { 'x-request-id': 'fake-ark-request', ...headers } });
}

const isMultimodalRequest = wireCheck(MultimodalEmbeddingsRequest);

function multimodal(request: RecordedRequest, response: ServerResponse): void {
  if (request.headers.authorization !== `Bearer ${fakeArkKey}`) {
    sendError(response, 401, {
      code: 'AuthenticationError',
      message: 'The API key in the request is missing or invalid.',
    });
    return;
  }
  const body = request.body as MultimodalBody;
  const failing = body.input?.find?.(
    (input) => input.type === 'text' && /^fake-error-\d{3}$/.test(input.text ?? ''),
  )?.text;
  const failure = /^fake-error-(\d{3})$/.exec(failing ?? body.model ?? '');
  if (failure) {
    sendError(response, Number(failure[1]), {
      code: 'InternalServiceError',
      message: `The fake failed with ${failure[1]}`,
    });
    return;
  }
  if (!Array.isArray(body.input) || body.input.length === 0) {
    sendError(response, 400, {
      code: 'MissingParameter',
      message: 'The request failed because it is missing one or multiple required parameters.',
      param: 'input',
    });
    return;
  }
  if (!isMultimodalRequest(request.body)) {
    sendError(response, 400, {
      code: 'InvalidParameter',
      message: 'One or more parameters specified in the request are not valid.',
    });
    return;
  }
  let textTokens = 0;
  let imageTokens = 0;
  for (const [index, input] of body.input.entries()) {
    if (input.type === 'text' && typeof input.text === 'string')
      textTokens += input.text.split(/\s+/).filter(Boolean).length;
    else if (
      (input.type === 'image_url' && input.image_url?.url) ||
      (input.type === 'video_url' && input.video_url?.url)
    )
      imageTokens += mediaTokens;
    else {
      sendError(response, 400, {
        code: 'InvalidParameter',
        message: 'One or more parameters specified in the request are not valid.',
        param: `input[${index}]`,
      });
      return;
    }
  }
  const seed = body.input
    .map((input) => input.text ?? input.image_url?.url?.slice(0, 64) ?? input.video_url?.url?.slice(0, 64))
    .join('|');
  const tokens = textTokens + imageTokens;
  const answer = {
    id: '021718fake',
    object: 'list',
    created: 1_743_575_435,
    model: body.model,
    data: { object: 'embedding', embedding: fakeVector(seed, body.dimensions ?? 8) },
    usage: {
      prompt_tokens: tokens,
      total_tokens: tokens,
      prompt_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
    },
  };
  writeJson<MultimodalEmbeddingsAnswer>(response, {
    status: 200,
    body: answer,
    headers: { 'x-request-id': 'fake-ark-request' },
  });
}

const isSeedream = wireCheck(SeedreamRequest);

/**
 * `POST /api/v3/images/generations` (Seedream): `n` images as a sequential group (`max_images`), or in layer
 * mode a base image and three layers with boxes; URLs served by the fake itself (`response_format: url`) or
 * base64. Usage counts the images made, 16,384 output tokens each. Scenarios come from the prompt (see
 * fake-images.ts).
 */
async function seedream(request: RecordedRequest, response: ServerResponse, files: FakeFiles): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeArkKey}`)
    return sendError(response, 401, {
      code: 'AuthenticationError',
      message: 'The API key in the request is missing or invalid.',
    });
  if (!isSeedream(request.body))
    return sendError(response, 400, {
      code: 'InvalidParameter',
      message: 'One or more parameters specified in the request are not valid.',
    });
  const body = request.body;
  const scenario = scenarioOf(body.prompt);
  if (!(await delayFor(scenario))) return;
  if (scenario.errorStatus) {
    const code = scenario.errorStatus === 400 ? 'OutputImageSensitiveContentDetected' : 'InternalServiceError';
    return sendError(response, scenario.errorStatus, {
      code,
      message: `The fake failed with ${scenario.errorStatus}`,
      param: null,
      headers: scenario.retryAfter ? { 'retry-after': scenario.retryAfter } : {},
    });
  }
  if (scenario.garbage)
    return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"data": "not a list"}');
  const layers = body.layer_decomposition === true;
  if (layers && (typeof body.image !== 'string' || body.size !== undefined))
    return sendError(response, 400, {
      code: 'InvalidParameter',
      message: 'Layer decomposition takes one image and no size.',
      param: 'image',
    });
  const count = layers
    ? 4
    : body.sequential_image_generation === 'auto'
      ? (body.sequential_image_generation_options?.max_images ?? 1)
      : 1;
  const base64 = body.response_format === 'b64_json';
  const data: SeedreamItem[] = [];
  for (let index = 0; index < count; index++) {
    const failing =
      (scenario.partial && index === count - 1 && count > 1) || (scenario.layerFail && layers && index === 2);
    if (failing) {
      data.push({
        error: {
          code: 'OutputImageSensitiveContentDetected',
          message: 'The generated image may contain sensitive information.',
        },
      });
      continue;
    }
    const base = { width: 32, height: 24 };
    const size = layers && index > 0 ? { width: 8, height: 6 } : base;
    const png = scenario.notImage ? notAnImagePage : fakePng(`${body.prompt}|${index}`, size.width, size.height);
    // The vendor's SDK types name each image's `output_format`; the fake's images are all PNG.
    const item: SeedreamItem & { output_format: 'png' } = {
      ...(base64
        ? { b64_json: png.toString('base64') }
        : { url: files.add(png, { expired: scenario.expiredUrls, delayMs: scenario.fileDelayMs }) }),
      output_format: 'png',
    };
    item.size = `${size.width}x${size.height}`;
    if (layers) {
      item.z_index = index;
      if (index > 0) {
        const left = 4 * index;
        const top = 2 * index;
        // As BoundingBox of the vendor's SDK: pixels of the base image, and the same edges from 0 to 1000.
        const across = (pixels: number) => Math.round((pixels / base.width) * 1000);
        const down = (pixels: number) => Math.round((pixels / base.height) * 1000);
        item.bounding_box = {
          absolute: [left, top, left + size.width, top + size.height],
          normalized: [across(left), down(top), across(left + size.width), down(top + size.height)],
        };
        item.name = `element ${index}`;
        item.description = `the ${index}. element of the picture`;
      }
    }
    data.push(item);
  }
  const made = data.filter((item) => !item.error).length;
  const inputImages = body.image === undefined ? 0 : typeof body.image === 'string' ? 1 : body.image.length;
  const usage = {
    input_images: inputImages,
    generated_images: made,
    output_tokens: 16_384 * made,
    total_tokens: 16_384 * made,
  };
  if (body.stream === true) {
    // One event per image as it is finished, then the completion with usage, then [DONE] (ModelArk wire notes).
    response.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'fake-ark-request' });
    for (const [index, item] of data.entries()) {
      const event: SeedreamStreamEvent = item.error
        ? { type: 'image_generation.partial_failed', image_index: index, error: item.error }
        : {
            type: 'image_generation.partial_succeeded',
            image_index: index,
            ...(item.url ? { url: item.url } : { b64_json: item.b64_json }),
            size: item.size,
          };
      response.write(sseEvent({ ...event, model: body.model, created: 1_757_396_757 }));
    }
    const completed: SeedreamStreamEvent = { type: 'image_generation.completed', usage };
    response.end(`${sseEvent({ ...completed, model: body.model, created: 1_757_396_757 })}data: [DONE]\n\n`);
    return;
  }
  const answer: SeedreamAnswer = { model: body.model, created: 1_757_321_139, data, usage };
  writeJson<SeedreamAnswer>(response, { status: 200, body: answer, headers: { 'x-request-id': 'fake-ark-request' } });
}

export function startArkFake(): Promise<FakeServer> {
  let url = '';
  const files = new FakeFiles(() => url);
  const tasks = new SeedanceTasks(files, sendError);
  const started = startFakeServer(async (request, response) => {
    if (await files.serve(request, response)) return;
    if (await tasks.handle(request, response)) return;
    if (request.method === 'POST' && request.path === '/api/v3/embeddings/multimodal')
      return multimodal(request, response);
    if (request.method === 'POST' && request.path === '/api/v3/images/generations')
      return seedream(request, response, files);
    sendError(response, 404, {
      code: 'InvalidEndpoint.NotFound',
      message: `Not found: ${request.method} ${request.path}`,
    });
  });
  return started.then((server) => {
    url = server.url;
    return server;
  });
}
