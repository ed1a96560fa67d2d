import { afterAll, describe, expect, it } from 'vitest';
import { requirePricing } from '../../src/billing/pricing.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import type { EmbeddingInput } from '../../src/domain/embedding.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { gateDimensions } from '../../src/gateway/embedding-generation.ts';
import { acceptedParts, checkEmbeddingShape, prepareEmbeddingInputs } from '../../src/gateway/embedding-inputs.ts';
import { embeddingEncoding } from '../../src/gateway/embedding-list.ts';
import { servingRows } from '../../src/gateway/serving-rows.ts';
import { BetaEmbeddingsRequest } from '../../src/protocols/anthropic/messages.ts';
import { BatchEmbedContentsRequest, EmbedContentRequest } from '../../src/protocols/gemini/embed-content.ts';
import { EmbeddingsRequest } from '../../src/protocols/openai/embeddings.ts';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import { createGeminiAdapter } from '../../src/providers/gemini/gemini-adapter.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { decodeEmbeddingInput } from '../../src/surfaces/alpha/embeddings-codec.ts';
import { decodeBetaEmbeddingInput } from '../../src/surfaces/beta/embeddings-codec.ts';
import { decodeBatchEmbedContents, decodeEmbedContent } from '../../src/surfaces/gamma/embed-content-codec.ts';
import { checkedBody } from '../support/body-check.ts';
import { alphaEmbedding, betaEmbedding, embeddingModelsYaml, gammaEmbedding } from '../support/embedding-models.ts';
import { isoVideoFile, pdfFile, pngBase64, wavFile } from '../support/media-fixtures.ts';

/**
 * Every limit and refused combination of an embeddings request on the alpha, beta and gamma surfaces, refused
 * naming what broke by the steps a request takes before any hold, record or upstream call: its route's body
 * schema and encoding, its surface's decoding, the model's resolution and pricing, its rows' part types and
 * dimensions (`EmbeddingRecipe.plan`), and its media's bytes (`prepareEmbeddingInputs`). That the routes
 * answer these as a 400 envelope with nothing held, recorded or sent, and the refusals that need a URL
 * fetched, are claimed over HTTP in embeddings.test.ts.
 */
const config = parseConfig(
  `
providers:
  openai: { protocol: openai, baseUrl: https://openai.example/v1, apiKey: k }
  gemini: { protocol: gemini, baseUrl: https://gemini.example/v1beta, apiKey: k }
  ark: { protocol: ark, baseUrl: https://ark.example/api/v3, apiKey: k }
models:
${embeddingModelsYaml}`,
  'embedding-rules.yaml',
  {},
);
const catalog = new Catalog(config);
const http = new UpstreamHttp();
afterAll(() => http.close());
const sources = {
  adapters: new Map(
    [createOpenAiAdapter(http), createGeminiAdapter(http), createArkAdapter(http)].map((a) => [a.protocol, a]),
  ),
  providers: config.providers,
};

/** An embeddings request as its route's surface decodes it: the model, the inputs, and the size asked. */
interface Decoded {
  modelId: string;
  inputs: EmbeddingInput[];
  dimensions: number | undefined;
  dimensionsField?: string;
}

/** The route's body check and its surface's decoding; a string is the schema's refusal. */
function decoded(url: string, payload: object): Decoded | string {
  const gamma = /^\/api\/gamma\/v1beta\/models\/([^:]+):(embedContent|batchEmbedContents)$/.exec(url);
  if (gamma) {
    const modelId = gamma[1] ?? '';
    const action = gamma[2];
    const dimensionsField = 'outputDimensionality';
    if (action === 'embedContent') {
      const checked = checkedBody(EmbedContentRequest, payload);
      if (checked.errors) return checked.errors.join(' ');
      return { modelId, dimensionsField, ...decodeEmbedContent(checked.body, modelId) };
    }
    const checked = checkedBody(BatchEmbedContentsRequest, payload);
    if (checked.errors) return checked.errors.join(' ');
    return { modelId, dimensionsField, ...decodeBatchEmbedContents(checked.body, modelId) };
  }
  if (url === '/api/alpha/v1/embeddings') {
    const checked = checkedBody(EmbeddingsRequest, payload);
    if (checked.errors) return checked.errors.join(' ');
    embeddingEncoding(checked.body.encoding_format);
    const { model, input, dimensions } = checked.body;
    return { modelId: model, inputs: decodeEmbeddingInput(input), dimensions };
  }
  if (url !== '/api/beta/v1/embeddings') throw new Error(`no embeddings route ${url}`);
  const checked = checkedBody(BetaEmbeddingsRequest, payload);
  if (checked.errors) return checked.errors.join(' ');
  embeddingEncoding(checked.body.encoding_format);
  const { model, input, dimensions } = checked.body;
  return { modelId: model, inputs: decodeBetaEmbeddingInput(input), dimensions };
}

/** The message of the 400 a request is refused with, by the first step that refuses it. */
async function refusalOf([url, payload]: readonly [string, object]): Promise<string> {
  try {
    const request = decoded(url, payload);
    if (typeof request === 'string') return request;
    const model = catalog.resolve(request.modelId);
    requirePricing(model);
    const [winner] = servingRows(sources, model, 'embeddings');
    if (!winner) throw new Error(`model "${model.modelId}" has no embeddings row here`);
    const row = {
      accepted: acceptedParts(winner.row.capabilities, model.inputModalities, winner.adapter.parts),
      carries: winner.adapter.parts,
    };
    gateDimensions(model.modelId, winner.row.capabilities, request);
    checkEmbeddingShape(model.modelId, request.inputs, row.accepted);
    await prepareEmbeddingInputs(request.inputs, row, {
      fetchMedia: () => Promise.reject(new Error('these requests are refused before any URL is fetched')),
      maxBytes: 65_536,
    });
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    expect(error.status).toBe(400);
    return error.message;
  }
  throw new Error('expected a refusal');
}

const base64 = (bytes: Buffer) => bytes.toString('base64');
const wav = (seconds: number) => ({ type: 'audioBase64', data: base64(wavFile(seconds)), mediaType: 'audio/wav' });
const video = (seconds: number, mediaType = 'video/mp4') => ({
  type: 'videoBase64',
  data: base64(isoVideoFile(seconds)),
  mediaType,
});
const image = { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' };
const [beta, alpha, gamma] = [betaEmbedding, alphaEmbedding, gammaEmbedding];
const text = { parts: [{ text: 'x' }] };

describe('an embeddings request that breaks a limit is refused naming it', () => {
  it('lets one within every limit through', async () => {
    await expect(refusalOf(beta('gemini-embed-2', image, wav(1), video(1)))).rejects.toThrow('expected a refusal');
  });

  it('seven images', async () => {
    expect(await refusalOf(beta('gemini-embed-2', ...Array.from({ length: 7 }, () => image)))).toMatch(
      /at most 6 images/,
    );
  });

  it('seven images across inputs', async () => {
    expect(
      await refusalOf([
        '/api/beta/v1/embeddings',
        { model: 'gemini-embed-2', input: Array.from({ length: 7 }, () => ({ content: [image] })) },
      ]),
    ).toMatch(/at most 6 images/);
  });

  it('two audio parts', async () => {
    expect(await refusalOf(beta('gemini-embed-2', wav(1), wav(1)))).toMatch(/at most 1 audio part/);
  });

  it('audio that is not WAV', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { ...wav(1), mediaType: 'audio/mpeg' }))).toMatch(
      /audio must be audio\/wav/,
    );
  });

  it('audio over 180 s', async () => {
    expect(await refusalOf(beta('gemini-embed-2', wav(181)))).toMatch(/lasts 181\.0 s; at most 180 s/);
  });

  it('audio whose bytes are not WAV', async () => {
    expect(
      await refusalOf(beta('gemini-embed-2', { ...wav(1), data: base64(Buffer.from('not a wav file at all')) })),
    ).toMatch(/not a readable WAV/);
  });

  it('audio by URL to a model without audio', async () => {
    expect(
      await refusalOf(beta('vision-embed', { type: 'audioUrl', url: 'https://media.example/speech.wav' })),
    ).toMatch(/model "vision-embed" does not accept "audioUrl" input parts/);
  });

  it('two video parts', async () => {
    expect(await refusalOf(beta('gemini-embed-2', video(1), video(1)))).toMatch(/at most 1 video part/);
  });

  it('video over 120 s', async () => {
    expect(await refusalOf(beta('gemini-embed-2', video(121)))).toMatch(/lasts 121\.0 s; at most 120 s/);
  });

  it('video that is not MP4 or MOV', async () => {
    expect(await refusalOf(beta('gemini-embed-2', video(1, 'video/webm')))).toMatch(/video must be MP4 or MOV/);
  });

  it('video whose bytes are not MP4', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { ...video(1), data: base64(pdfFile) }))).toMatch(
      /not a readable MP4 or MOV/,
    );
  });

  it('a file that is not a PDF', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { type: 'fileBase64', data: base64(wavFile(1)) }))).toMatch(
      /not a PDF/,
    );
  });

  it('invalid base64', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { ...image, data: '***' }))).toMatch(/not valid base64/);
  });

  it('raw base64 without a media type', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { type: 'imageBase64', data: pngBase64 }))).toMatch(
      /mediaType is required/,
    );
  });

  it('audio to a text-only model', async () => {
    expect(await refusalOf(beta('text-embed', wav(1)))).toMatch(
      /model "text-embed" does not accept "audioBase64" input parts/,
    );
  });

  it('an image to a text-only model', async () => {
    expect(await refusalOf(beta('gemini-embed-1', image))).toMatch(
      /model "gemini-embed-1" does not accept "imageBase64" input parts/,
    );
  });

  it('video to the image model', async () => {
    expect(await refusalOf(beta('vision-embed', video(1)))).toMatch(
      /model "vision-embed" does not accept "videoBase64" input parts/,
    );
  });

  it('a PDF to the image model', async () => {
    expect(await refusalOf(beta('vision-embed', { type: 'fileBase64', data: base64(pdfFile) }))).toMatch(
      /model "vision-embed" does not accept "fileBase64" input parts/,
    );
  });

  it('an unknown part type', async () => {
    expect(await refusalOf(beta('gemini-embed-2', { type: 'hologram', data: 'x' }))).toMatch(/type must be one of/);
  });

  it('an unknown encoding on beta', async () => {
    expect(
      await refusalOf(['/api/beta/v1/embeddings', { model: 'text-embed', input: ['x'], encoding_format: 'int8' }]),
    ).toMatch(/send "float" or "base64"/);
  });

  it('129 inputs on alpha', async () => {
    expect(await refusalOf(alpha({ input: Array.from({ length: 129 }, (_, index) => `text ${index}`) }))).toMatch(
      /at most 128 inputs/,
    );
  });

  it('multimodal input on alpha', async () => {
    expect(await refusalOf(alpha({ input: [{ content: [image] }] }))).toMatch(
      /multimodal input is not accepted on this surface/,
    );
  });

  it('token arrays on alpha', async () => {
    expect(await refusalOf(alpha({ input: [[1, 2, 3]] }))).toMatch(/must be a string/);
  });

  it('an empty string', async () => {
    expect(await refusalOf(alpha({ input: ['ok', ''] }))).toMatch(/input 1 has an empty text/);
  });

  it('an unknown encoding on alpha', async () => {
    expect(await refusalOf(alpha({ input: 'x', encoding_format: 'binary' }))).toMatch(/send "float" or "base64"/);
  });

  it('dimensions for a fixed-size model', async () => {
    expect(
      await refusalOf(['/api/alpha/v1/embeddings', { model: 'gemini-embed-1', input: 'x', dimensions: 64 }]),
    ).toMatch(/does not support parameter "dimensions"/);
  });

  it('dimensions out of range', async () => {
    expect(await refusalOf(alpha({ input: 'x', dimensions: 4000 }))).toMatch(
      /parameter "dimensions" of model "text-embed"/,
    );
  });

  it('a text model', async () => {
    expect(await refusalOf(['/api/alpha/v1/embeddings', { model: 'no-such-model', input: 'x' }])).toMatch(
      /not available/,
    );
  });

  it('outputDimensionality for a fixed-size model on gamma', async () => {
    expect(
      await refusalOf(gamma('gemini-embed-1', 'embedContent', { content: text, outputDimensionality: 64 })),
    ).toMatch(/model "gemini-embed-1" does not support parameter "outputDimensionality"/);
  });

  it('outputDimensionality out of range on gamma', async () => {
    expect(
      await refusalOf(
        gamma('gemini-embed-2', 'batchEmbedContents', { requests: [{ content: text, outputDimensionality: 64 }] }),
      ),
    ).toMatch(/parameter "outputDimensionality" of model "gemini-embed-2" must be an integer from 128 to 3072/);
  });

  it('taskType on gamma', async () => {
    expect(
      await refusalOf(gamma('gemini-embed-1', 'embedContent', { content: text, taskType: 'RETRIEVAL_QUERY' })),
    ).toMatch(/taskType is not supported/);
  });

  it('title in gamma config', async () => {
    expect(
      await refusalOf(gamma('gemini-embed-1', 'embedContent', { contents: text, config: { title: 'doc' } })),
    ).toMatch(/title is not supported/);
  });

  it('taskType in a gamma batch', async () => {
    expect(
      await refusalOf(
        gamma('gemini-embed-1', 'batchEmbedContents', { requests: [{ content: text, taskType: 'CLUSTERING' }] }),
      ),
    ).toMatch(/requests\.0\.taskType is not supported/);
  });

  it('a gamma batch of mixed sizes', async () => {
    expect(
      await refusalOf(
        gamma('gemini-embed-2', 'batchEmbedContents', {
          requests: [
            { content: text, outputDimensionality: 256 },
            { content: text, outputDimensionality: 512 },
          ],
        }),
      ),
    ).toMatch(/same outputDimensionality/);
  });

  it('a gamma batch naming another model', async () => {
    expect(
      await refusalOf(
        gamma('gemini-embed-1', 'batchEmbedContents', { requests: [{ model: 'models/text-embed', content: text }] }),
      ),
    ).toMatch(/differs from the model in the path/);
  });

  it('a gamma inline part of another kind', async () => {
    expect(
      await refusalOf(
        gamma('gemini-embed-2', 'embedContent', {
          content: { parts: [{ inlineData: { mimeType: 'text/csv', data: 'YQ==' } }] },
        }),
      ),
    ).toMatch(/not an image, audio, video or PDF type/);
  });

  it('a gamma embed without content', async () => {
    expect(await refusalOf(gamma('gemini-embed-1', 'embedContent', {}))).toMatch(/exactly one of content and contents/);
  });
});
