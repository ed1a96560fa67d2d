import type { Catalog } from '../catalog/catalog.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { GenerationPipeline } from './generation-pipeline.ts';
import type { ImageGeneration } from './image-generation.ts';
import type { NativeImageInput } from './image-request-check.ts';
import { ImageRelayRecipe, relaysImages, type ImageRelayInput, type RelayedImages } from './image-relay.ts';
import {
  ImageStreamRecipe,
  streamsImages,
  type ImageStreamingSources,
  type ImageStreamRun,
} from './image-streaming.ts';
import { servingRows } from './serving-rows.ts';

/** An images request answered while the client waits: the upstream's own answer, or the checked request. */
export interface ImageRequestInput {
  modelId: string;
  streaming: boolean;
  /** The request in its wire protocol's shape, for a winning row of the same protocol (see `ImageRelayInput`). */
  relay: Omit<ImageRelayInput, 'modelId' | 'streaming'>;
  /** The same request decoded, for a winning row of another protocol. */
  decoded: NativeImageInput;
}

export type ImageRequestRun =
  | ({ kind: 'relay' } & RelayedImages)
  | ({ kind: 'events' } & ImageStreamRun)
  | { kind: 'job'; generationId: string; droppedParameters: string[] };

/**
 * An images request whose client waits for the answer, run the way the model's winning image row can serve it:
 * relayed when its family speaks the request's protocol, streamed image by image when a stream is asked and
 * its family streams, and otherwise made as a job (fields the model does not take dropped, not refused).
 */
export class ImageRequests {
  constructor(
    private readonly dependencies: {
      catalog: Catalog;
      pipeline: GenerationPipeline;
      jobs: ImageGeneration;
      sources: ImageStreamingSources;
    },
  ) {}

  async start(context: RequestContext, input: ImageRequestInput): Promise<ImageRequestRun> {
    const { catalog, pipeline, jobs, sources } = this.dependencies;
    const rows = servingRows(pipeline.rowSources, catalog.resolve(input.modelId), 'images');
    const winner = rows[0];
    if (winner && relaysImages(winner.adapter)) {
      const relayInput = { ...input.relay, modelId: input.modelId, streaming: input.streaming };
      return { kind: 'relay', ...(await pipeline.run(context, new ImageRelayRecipe(rows), relayInput)) };
    }
    if (winner && input.streaming && streamsImages(winner.adapter))
      return { kind: 'events', ...(await pipeline.run(context, new ImageStreamRecipe(rows, sources), input.decoded)) };
    const { generationId, droppedParameters } = await jobs.submit(context, input.decoded, true);
    return { kind: 'job', generationId, droppedParameters };
  }
}
