import type { Settlement } from '../billing/credit-ledger.ts';
import { embeddingCost, requirePricing } from '../billing/pricing.ts';
import { countTextTokens, tokensPerImage, wholeTokens } from '../billing/token-estimate.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import {
  emptyMediaTally,
  type EmbeddingInput,
  type EmbeddingPartType,
  type EmbeddingResult,
  type MediaTally,
} from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';
import type { GenerationAttempt, GenerationRoute } from '../domain/generation-route.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { EmbeddingAdapter } from '../providers/provider-adapter.ts';
import {
  acceptedParts,
  checkEmbeddingShape,
  prepareEmbeddingInputs,
  type EmbeddingRowInputs,
  type MediaFetch,
} from './embedding-inputs.ts';
import { worthFallingBack } from './fallback.ts';
import type { RowRef } from './provider-breakers.ts';
import { dispatchWithFallback } from './upstream-dispatch.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { GenerationDependencies } from './text-generation.ts';

export interface EmbeddingGenerationInput {
  modelId: string;
  inputs: readonly EmbeddingInput[];
  dimensions?: number;
  /** What the client's surface calls `dimensions`, for messages about it. */
  dimensionsField?: string;
  /** What the usage record keeps of the request (no input content). */
  recordedRequest: Record<string, unknown>;
}

export interface EmbeddingAnswer {
  /** One vector per input, in input order. */
  vectors: number[][];
  inputTokens: number;
}

interface Route extends EmbeddingRowInputs {
  providerId: string;
  upstreamModel: string;
  capabilities: ProviderRow['capabilities'];
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
  const text = inputs.reduce(
    (sum, input) =>
      sum +
      tokensPerInput +
      input.parts.reduce((bytes, part) => bytes + (part.type === 'text' ? Buffer.byteLength(part.text) : 0), 0),
    0,
  );
  return text + media.images * tokensPerImage;
}

function countedTokens(inputs: readonly EmbeddingInput[]): number {
  return inputs.reduce(
    (sum, input) =>
      sum + input.parts.reduce((count, part) => count + (part.type === 'text' ? countTextTokens(part.text) : 0), 0),
    0,
  );
}

/** The pipeline for embeddings: resolve -> check inputs and limits -> gate -> hold -> dispatch (with fallback) -> settle. */
export class EmbeddingGeneration {
  constructor(
    private readonly dependencies: GenerationDependencies,
    private readonly fetchMedia: MediaFetch,
    /** All media one request downloads, in bytes. */
    private readonly maxMediaBytes: number,
  ) {}

  async embed(caller: RequestContext, input: EmbeddingGenerationInput): Promise<EmbeddingAnswer> {
    const startedAt = Date.now();
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    const pricing = requirePricing(model);
    const [winner, ...others] = this.routes(model);
    const dimensions = gateDimensions(model.modelId, winner!.capabilities, input);
    // Admission before work: the shape is checked and the most the request can cost is reserved before any
    // media is decoded or downloaded, so a refused request costs the gateway next to nothing.
    const bound = checkEmbeddingShape(model.modelId, input.inputs, winner!.accepted);
    const reservation = await ledger.reserve({
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      amountNanos: embeddingCost(pricing, maximumTokens(input.inputs, bound), bound),
      modelId: model.modelId,
      requestLog: caller.log,
    });
    reservation.whenEnded(this.dependencies.work.begin());
    let prepared: Awaited<ReturnType<typeof prepareEmbeddingInputs>>;
    try {
      prepared = await prepareEmbeddingInputs(input.inputs, winner!, this.fetchMedia, this.maxMediaBytes);
    } catch (error) {
      // The client is told of its request, not of storage failing to give the hold back (that is reported).
      await reservation.release().catch(() => undefined);
      throw error;
    }
    const { inputs, media } = prepared;
    // Rows that cannot take these inputs (as asked and as they will be sent) or this size are no fallback for this request.
    const asked = partTypes(input.inputs);
    const sent = partTypes(inputs);
    const routes = [
      { route: winner!, dimensions },
      ...others.flatMap((route) => {
        if (
          !asked.every((type) => route.accepted.includes(type)) ||
          !sent.every((type) => route.carries.includes(type))
        )
          return [];
        try {
          return [{ route, dimensions: gateDimensions(model.modelId, route.capabilities, input) }];
        } catch {
          return [];
        }
      }),
    ];

    const recordedRequest = { ...input.recordedRequest, operation: 'embeddings', inputs: input.inputs.length };
    // Tokens that providers reported for calls of attempts that failed: what a request failing in the end is charged.
    let usedByFailures = 0;
    const attempts: GenerationAttempt[] = [];
    const candidates = routes.map((candidate) => ({
      providerId: candidate.route.providerId,
      upstreamModel: candidate.route.upstreamModel,
      ...candidate,
    }));
    const routeOf = (served: RowRef, fallbacks: GenerationAttempt[], firstByteMs?: number): GenerationRoute => ({
      providerId: served.providerId,
      upstreamModel: served.upstreamModel,
      fallbacks,
      ...(caller.requestId ? { requestId: caller.requestId } : {}),
      ...(firstByteMs !== undefined ? { firstByteMs } : {}),
    });
    let served: { value: EmbeddingResult; row: (typeof candidates)[number] };
    try {
      served = await dispatchWithFallback({
        modelId: model.modelId,
        accountId: caller.accountId,
        rows: candidates,
        resilience: this.dependencies.resilience,
        // Nothing has reached the client yet, so another row may still serve the request.
        mayContinue: worthFallingBack,
        attempt: async ({ route, dimensions: size }) => {
          let used = 0;
          try {
            return await route.adapter.embed(
              {
                upstreamModel: route.upstreamModel,
                inputs,
                dimensions: size,
                reportUsage: (tokens) => (used += tokens),
              },
              { target: route.target },
            );
          } finally {
            usedByFailures += used;
          }
        },
        attempts,
      });
    } catch (error) {
      const last = attempts.at(-1) ?? candidates[0]!;
      // Every row skipped (its breaker open): nothing went upstream, so nothing is recorded.
      if (attempts.every((attempt) => attempt.outcome === 'skipped'))
        await reservation.release().catch(() => undefined);
      else
        reservation.settleInBackground({
          ...failedSettlement(pricing, wholeTokens(usedByFailures), recordedRequest),
          route: routeOf(last, attempts.slice(0, -1)),
        });
      throw error;
    }
    const { value: result, row } = served;
    const counted = result.inputTokens === undefined;
    const inputTokens = counted ? countedTokens(inputs) : wholeTokens(result.inputTokens);
    const usage = {
      promptTokens: inputTokens,
      totalTokens: inputTokens,
      ...mediaUsage(media),
      ...(counted ? { countedByGateway: true } : {}),
    };
    // The vectors go out now; the hold covers the cost until the settlement replaces it.
    reservation.settleInBackground({
      costNanos: embeddingCost(pricing, inputTokens, media),
      modality: 'text',
      status: 'succeeded',
      request: recordedRequest,
      usage,
      route: routeOf(row, attempts, Date.now() - startedAt),
    });
    return { vectors: result.vectors, inputTokens };
  }

  /** The model's provider rows that can embed, best first; 400 when the model makes no embeddings. */
  private routes(model: CatalogModel): Route[] {
    const routes: Route[] = [];
    if (model.outputModalities.includes('embedding')) {
      for (const row of model.rows) {
        const adapter = this.dependencies.adapters.get(row.protocol)?.embeddings;
        const target = this.dependencies.providers.get(row.providerId);
        if (adapter && target) {
          routes.push({
            providerId: row.providerId,
            upstreamModel: row.upstreamModel,
            capabilities: row.capabilities,
            adapter,
            target,
            accepted: acceptedParts(row.capabilities, model.inputModalities, adapter.parts),
            carries: adapter.parts,
          });
        }
      }
    }
    if (routes.length === 0)
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not make embeddings`);
    return routes;
  }
}

/** `dimensions` only where the row's capabilities bound it (variable-dimension models), within the bounds. */
function gateDimensions(
  modelId: string,
  capabilities: ProviderRow['capabilities'],
  {
    dimensions,
    dimensionsField: field = 'dimensions',
  }: Pick<EmbeddingGenerationInput, 'dimensions' | 'dimensionsField'>,
): number | undefined {
  if (dimensions === undefined) return undefined;
  const constraint = capabilities?.params?.dimensions;
  if (!constraint) {
    if (capabilities?.strictParams === false) return undefined;
    throw new GatewayError('GW_PARAMETER_UNSUPPORTED', `model "${modelId}" does not support parameter "${field}"`);
  }
  gateParameters({
    modelId,
    capabilities: { params: { [field]: constraint } },
    scope: 'text',
    optional: {},
    values: { [field]: dimensions },
  });
  return dimensions;
}

/**
 * A request that failed in the end is recorded as failed and charged the tokens its providers reported for
 * the calls that did answer (usually none); the reservation caps it at what was held.
 */
function failedSettlement(pricing: ModelPricing, usedTokens: number, request: Record<string, unknown>): Settlement {
  return {
    costNanos: embeddingCost(pricing, usedTokens, emptyMediaTally()),
    modality: 'text',
    status: 'failed',
    request,
    ...(usedTokens > 0 ? { usage: { promptTokens: usedTokens, totalTokens: usedTokens } } : {}),
  };
}

function partTypes(inputs: readonly EmbeddingInput[]): EmbeddingPartType[] {
  return [...new Set(inputs.flatMap((input) => input.parts.map((part) => part.type)))];
}

function mediaUsage(media: MediaTally): Record<string, number> {
  return Object.fromEntries(
    Object.entries({
      images: media.images,
      audioSeconds: media.audioMs / 1000,
      videoSeconds: media.videoMs / 1000,
      files: media.files,
    }).filter(([, value]) => value > 0),
  );
}
