import type { EmbeddingInput, EmbeddingPart } from '../../domain/embedding.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { Content, Part } from '../../protocols/gemini/content.ts';
import type { BatchEmbedContentsRequest, EmbedContentRequest } from '../../protocols/gemini/embed-content.ts';

export type EmbedContentBody = EmbedContentRequest;
export type BatchEmbedContentsBody = BatchEmbedContentsRequest;

type Options = Pick<EmbedContentRequest, 'taskType' | 'title'>;

function refuse(message: string): never {
  throw new GatewayError('GW_VALIDATION', message);
}

function partOf(part: Part, where: string): EmbeddingPart {
  // The protocol's part holds one kind of data: a part with two would lose one of them here.
  if (part.text !== undefined && part.inlineData !== undefined)
    refuse(`${where} must hold one kind of data: text or inlineData, not both`);
  if (part.text !== undefined) {
    if (part.text === '') refuse(`${where}.text must not be empty`);
    return { type: 'text', text: part.text };
  }
  const inline = part.inlineData;
  if (inline === undefined) refuse(`${where} must be {text} or {inlineData: {mimeType, data}}`);
  const mediaType = inline.mimeType.toLowerCase();
  const data = inline.data;
  if (mediaType.startsWith('image/')) return { type: 'imageBase64', mediaType, data };
  if (mediaType.startsWith('audio/')) return { type: 'audioBase64', mediaType, data };
  if (mediaType.startsWith('video/')) return { type: 'videoBase64', mediaType, data };
  if (mediaType === 'application/pdf') return { type: 'fileBase64', mediaType, data };
  return refuse(`${where}.inlineData.mimeType "${inline.mimeType}" is not an image, audio, video or PDF type`);
}

function inputOf(content: Content, where: string): EmbeddingInput {
  return { parts: content.parts.map((part, index) => partOf(part, `${where}.parts.${index}`)) };
}

function refuseUnsupported(options: Options, where: string): void {
  for (const field of ['taskType', 'title'] as const) {
    if (options[field] !== undefined)
      refuse(`${where}${field} is not supported: embeddings are made without a task type or title`);
  }
}

/** The model a batch request names must be the one in the path (`models/<id>` or `<id>`), as the protocol requires. */
function checkModel(named: string | undefined, pathModel: string, where: string): void {
  if (named !== undefined && named !== pathModel && named !== `models/${pathModel}`)
    refuse(`${where}model "${named}" differs from the model in the path ("${pathModel}")`);
}

export function decodeEmbedContent(
  body: EmbedContentBody,
  pathModel: string,
): { inputs: EmbeddingInput[]; dimensions: number | undefined } {
  const content = body.content ?? body.contents;
  if (!content || (body.content && body.contents)) refuse('body must have exactly one of content and contents');
  refuseUnsupported(body, 'body.');
  refuseUnsupported(body.config ?? {}, 'body.config.');
  checkModel(body.model, pathModel, 'body.');
  const sizes = [body.outputDimensionality, body.config?.outputDimensionality].filter((size) => size !== undefined);
  if (new Set(sizes).size > 1) refuse('body.outputDimensionality and body.config.outputDimensionality differ');
  return { inputs: [inputOf(content, body.content ? 'body.content' : 'body.contents')], dimensions: sizes[0] };
}

export function decodeBatchEmbedContents(
  body: BatchEmbedContentsBody,
  pathModel: string,
): { inputs: EmbeddingInput[]; dimensions: number | undefined } {
  const sizes = new Set(body.requests.map((request) => request.outputDimensionality));
  // One call makes every vector, so every request of the batch must ask for the same size.
  if (sizes.size > 1) refuse('every request of a batch must have the same outputDimensionality');
  const inputs = body.requests.map((request, index) => {
    const where = `body.requests.${index}.`;
    refuseUnsupported(request, where);
    checkModel(request.model, pathModel, where);
    return inputOf(request.content, `${where}content`);
  });
  return { inputs, dimensions: body.requests[0]!.outputDimensionality };
}
