import type { Hold, Settlement } from '../billing/credit-ledger.ts';
import { embeddingCost, requirePricing } from '../billing/pricing.ts';
import { countTextTokens, tokensPerImage, wholeTokens } from '../billing/token-estimate.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import type { EmbeddingInput, EmbeddingPartType, EmbeddingResult, MediaTally } from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';
import type { EmbeddingAdapter } from '../providers/provider-adapter.ts';
import { acceptedParts, prepareEmbeddingInputs, type EmbeddingRowInputs, type MediaFetch } from './embedding-inputs.ts';
import { worthFallingBack } from './fallback.ts';
import type { Caller, GenerationDependencies } from './text-generation.ts';

export interface EmbeddingGenerationInput {
  modelId: string;
  inputs: readonly EmbeddingInput[];
  dimensions?: number;
  /** What the usage record keeps of the request (no input content). */
  recordedRequest: Record<string, unknown>;
}

export interface EmbeddingAnswer {
  /** One vector per input, in input order. */
  vectors: number[][];
  inputTokens: number;
}

interface Route extends EmbeddingRowInputs {
  upstreamModel: string;
  adapter: EmbeddingAdapter;
  target: ProviderConfig;
}

/** Tokens a provider may add around each input (start and end markers). */
const tokensPerInput = 8;

/**
 * A bound no tokenizer exceeds: byte-level and byte-fallback tokenizers spend at most one token per UTF-8
 * byte. Holding it means a settled embedding call never costs more than was reserved.
 */
function maximumTokens(inputs: readonly EmbeddingInput[], media: MediaTally): number {
  const text = inputs.reduce((sum, input) => sum + tokensPerInput + input.parts.reduce((bytes, part) => bytes + (part.type === 'text' ? Buffer.byteLength(part.text) : 0), 0), 0);
  return text + media.images * tokensPerImage;
}

function countedTokens(inputs: readonly EmbeddingInput[]): number {
  return inputs.reduce((sum, input) => sum + input.parts.reduce((count, part) => count + (part.type === 'text' ? countTextTokens(part.text) : 0), 0), 0);
}

/** The pipeline for embeddings: resolve -> check inputs and limits -> gate -> hold -> dispatch (with fallback) -> settle. */
export class EmbeddingGeneration {
  constructor(
    private readonly dependencies: GenerationDependencies,
    private readonly fetchMedia: MediaFetch,
  ) {}

  async embed(caller: Caller, input: EmbeddingGenerationInput): Promise<EmbeddingAnswer> {
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    const pricing = requirePricing(model);
    const [winner, ...others] = this.routes(model);
    const { inputs, media } = await prepareEmbeddingInputs(model.modelId, input.inputs, winner!, this.fetchMedia);
    const dimensions = this.gateDimensions(model, input.dimensions);
    // Rows that cannot take these inputs, as asked and as they will be sent, are no fallback for this request.
    const asked = partTypes(input.inputs);
    const sent = partTypes(inputs);
    const routes = [winner!, ...others.filter((route) => asked.every((type) => route.accepted.includes(type)) && sent.every((type) => route.carries.includes(type)))];

    const hold = await ledger.hold({ accountId: caller.accountId, apiKeyId: caller.apiKeyId, amountNanos: embeddingCost(pricing, maximumTokens(inputs, media), media), modelId: model.modelId });
    const endWork = this.dependencies.work.begin();
    const recordedRequest = { ...input.recordedRequest, operation: 'embeddings', inputs: input.inputs.length };
    for (const [index, route] of routes.entries()) {
      let result: EmbeddingResult;
      try {
        result = await route.adapter.embed({ upstreamModel: route.upstreamModel, inputs, dimensions }, { target: route.target });
      } catch (error) {
        // Nothing has reached the client yet, so another row may still serve the request.
        if (index < routes.length - 1 && worthFallingBack(error)) continue;
        await this.settleInBackground(hold, { costNanos: 0n, modality: 'text', status: 'failed', request: recordedRequest }, endWork);
        throw error;
      }
      const counted = result.inputTokens === undefined;
      const inputTokens = counted ? countedTokens(inputs) : wholeTokens(result.inputTokens);
      const usage = { promptTokens: inputTokens, totalTokens: inputTokens, ...mediaUsage(media), ...(counted ? { countedByGateway: true } : {}) };
      // The vectors go out now; the hold covers the cost until the settlement replaces it.
      void this.settleInBackground(hold, { costNanos: embeddingCost(pricing, inputTokens, media), modality: 'text', status: 'succeeded', request: recordedRequest, usage }, endWork);
      return { vectors: result.vectors, inputTokens };
    }
    throw new Error('unreachable: the route list is never empty');
  }

  /** Settles (a failed call is recorded and charged nothing); when storage fails, gives the hold back and reports it. */
  private async settleInBackground(hold: Hold, settlement: Settlement, endWork: () => void): Promise<void> {
    try {
      await this.dependencies.ledger.settle(hold, settlement);
    } catch (error) {
      await this.dependencies.ledger.release(hold).catch(() => undefined);
      this.dependencies.settlementFailed(error);
    } finally {
      endWork();
    }
  }

  /** `dimensions` only for variable-dimension models (those whose catalog entry bounds it), within the bounds. */
  private gateDimensions(model: CatalogModel, dimensions: number | undefined): number | undefined {
    if (dimensions === undefined) return undefined;
    const capabilities = model.rows[0]?.capabilities;
    if (!capabilities?.params?.dimensions) {
      if (capabilities?.strictParams === false) return undefined;
      throw new GatewayError('GW_PARAMETER_UNSUPPORTED', `model "${model.modelId}" does not support parameter "dimensions"`);
    }
    gateParameters({ modelId: model.modelId, capabilities, scope: 'text', optional: {}, values: { dimensions } });
    return dimensions;
  }

  /** The model's provider rows that can embed, best first; 400 when the model makes no embeddings. */
  private routes(model: CatalogModel): Route[] {
    const routes: Route[] = [];
    if (model.outputModalities.includes('embedding')) {
      for (const row of model.rows) {
        const adapter = this.dependencies.adapters.get(row.protocol)?.embeddings;
        const target = this.dependencies.providers.get(row.providerId);
        if (adapter && target) {
          routes.push({ upstreamModel: row.upstreamModel, adapter, target, accepted: acceptedParts(row.capabilities, model.inputModalities, adapter.parts), carries: adapter.parts });
        }
      }
    }
    if (routes.length === 0) throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not make embeddings`);
    return routes;
  }
}

function partTypes(inputs: readonly EmbeddingInput[]): EmbeddingPartType[] {
  return [...new Set(inputs.flatMap((input) => input.parts.map((part) => part.type)))];
}

function mediaUsage(media: MediaTally): Record<string, number> {
  return Object.fromEntries(
    Object.entries({ images: media.images, audioSeconds: media.audioMs / 1000, videoSeconds: media.videoMs / 1000, files: media.files }).filter(([, value]) => value > 0),
  );
}
