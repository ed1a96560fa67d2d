import { describe, expect, it } from 'vitest';
import type { ImageResultView } from '../../src/gateway/image-generation.ts';
import { ImagesGenerateRequest } from '../../src/protocols/openai/images.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import {
  alphaImageInput,
  ImageEventEncoder,
  imageEventsOf,
  imagesResponseOf,
  untranslatedFields,
} from '../../src/surfaces/alpha/images-codec.ts';

/** The alpha images codec on its own: OpenAI's images request to the native input, and a job's images back. */

const isImagesRequest = wireCheck(ImagesGenerateRequest);
/** A request as the alpha route has it: JSON the protocol's schema accepted. */
function checked(body: unknown): ImagesGenerateRequest {
  if (!isImagesRequest(body)) throw new Error(`not an images request: ${JSON.stringify(body)}`);
  return body;
}

describe('an alpha images request for a translated provider', () => {
  it('becomes the prompt as the one text part, n as numberOfImages, and the fields the model may take', () => {
    expect(
      alphaImageInput(
        checked({
          model: 'seedream',
          prompt: 'a lighthouse at dusk',
          n: 2,
          size: '1024x768',
          output_format: 'webp',
          quality: 'high',
          background: 'transparent',
          output_compression: 80,
        }),
      ),
    ).toEqual({
      modelId: 'seedream',
      content: [{ type: 'text', text: 'a lighthouse at dusk' }],
      numberOfImages: 2,
      size: '1024x768',
      outputFormat: 'webp',
      quality: 'high',
      background: 'transparent',
      outputCompression: 80,
      fieldNames: { numberOfImages: 'n', outputFormat: 'output_format', outputCompression: 'output_compression' },
    });
  });

  it('drops a size that is not WxH (auto, or zero-led) and a quality it does not know, rather than refusing', () => {
    const input = (size: string, quality: string) =>
      alphaImageInput(checked({ model: 'seedream', prompt: 'p', size, quality }));
    expect(input('auto', 'standard')).not.toHaveProperty('size');
    expect(input('auto', 'standard')).not.toHaveProperty('quality');
    expect(input('0x512', 'low')).not.toHaveProperty('size');
    expect(input('512x512px', 'low')).not.toHaveProperty('size');
    expect(input('512x512', 'low')).toMatchObject({ size: '512x512', quality: 'low' });
  });

  it('names back only the untranslatable fields the client set', () => {
    expect(untranslatedFields(checked({ model: 'm', prompt: 'p' }))).toEqual([]);
    expect(untranslatedFields(checked({ model: 'm', prompt: 'p', style: 'vivid', user: 'u-1', n: 1 }))).toEqual([
      'style',
      'user',
    ]);
    expect(untranslatedFields(checked({ model: 'm', prompt: 'p', moderation: 'low', partial_images: 0 }))).toEqual([
      'moderation',
      'partial_images',
    ]);
  });
});

const image = (assetId: string) => ({ assetId, downloadUrl: `https://gateway.example/media/${assetId}?sig=1` });
const finished = (usage: ImageResultView['usage']): ImageResultView => ({
  images: [image('img-a'), image('img-b')],
  usage,
});
const bytesOf = (index: number) => Promise.resolve(Buffer.from(`image ${index}`));

describe("a finished image job as OpenAI's ImagesResponse", () => {
  it('gives each image as its signed link by default, and no usage when no tokens were reported', async () => {
    const answer = await imagesResponseOf(finished({ generatedImages: 2, usdCost: 0.07 }), {
      created: 1_700_000_000,
      responseFormat: undefined,
      bytesOf,
    });
    expect(answer).toEqual({
      created: 1_700_000_000,
      data: [
        { url: 'https://gateway.example/media/img-a?sig=1' },
        { url: 'https://gateway.example/media/img-b?sig=1' },
      ],
    });
  });

  it('gives each image as the base64 of its archived bytes when asked, with the token usage summed when no total came', async () => {
    const answer = await imagesResponseOf(finished({ inputTokens: 12, outputTokens: 30, usdCost: 0.07 }), {
      created: 1_700_000_000,
      responseFormat: 'b64_json',
      bytesOf,
    });
    expect(answer).toEqual({
      created: 1_700_000_000,
      data: [
        { b64_json: Buffer.from('image 0').toString('base64') },
        { b64_json: Buffer.from('image 1').toString('base64') },
      ],
      usage: { input_tokens: 12, output_tokens: 30, total_tokens: 42 },
    });
  });

  it("keeps the provider's own total, and zero for a side it did not report", async () => {
    const answer = await imagesResponseOf(finished({ outputTokens: 30, totalTokens: 35, usdCost: 0 }), {
      created: 1,
      responseFormat: 'url',
      bytesOf,
    });
    expect(answer.usage).toEqual({ input_tokens: 0, output_tokens: 30, total_tokens: 35 });
  });
});

describe("a finished image job as OpenAI's image stream", () => {
  it('sends one completed event per image with its base64, the usage on the last only', async () => {
    const events: Array<[string, Record<string, unknown>]> = [];
    for await (const event of imageEventsOf(finished({ inputTokens: 3, outputTokens: 4, usdCost: 0.01 }), {
      created: 9,
      outputFormat: 'png',
      bytesOf,
    }))
      events.push(event);
    expect(events).toEqual([
      [
        'image_generation.completed',
        {
          type: 'image_generation.completed',
          b64_json: Buffer.from('image 0').toString('base64'),
          created_at: 9,
          output_format: 'png',
        },
      ],
      [
        'image_generation.completed',
        {
          type: 'image_generation.completed',
          b64_json: Buffer.from('image 1').toString('base64'),
          created_at: 9,
          output_format: 'png',
          usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
        },
      ],
    ]);
  });
});

describe('a translated image stream encoded as OpenAI events', () => {
  it('holds each image back until the next event, so the finish puts its usage on the last image', () => {
    const encoder = new ImageEventEncoder(5, 'jpeg');
    expect(encoder.encode({ type: 'image', index: 0, base64: 'AAA', size: '64x64' })).toEqual([]);
    expect(encoder.encode({ type: 'image', index: 1, base64: 'BBB', size: undefined })).toEqual([
      [
        'image_generation.completed',
        { type: 'image_generation.completed', b64_json: 'AAA', created_at: 5, output_format: 'jpeg', size: '64x64' },
      ],
    ]);
    expect(encoder.encode({ type: 'finish', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } })).toEqual([
      [
        'image_generation.completed',
        {
          type: 'image_generation.completed',
          b64_json: 'BBB',
          created_at: 5,
          output_format: 'jpeg',
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
        },
      ],
    ]);
    // Nothing is held after the finish: a further event sends nothing twice.
    expect(encoder.encode({ type: 'finish', usage: {} })).toEqual([]);
  });
});
