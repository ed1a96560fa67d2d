import { embeddingCost, requirePricing } from '../billing/pricing.ts';
import { countTextTokens } from '../domain/tokenizer.ts';
import { tokensPerImage } from '../billing/token-estimate.ts';
import { wholeTokens } from '../domain/chat.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import {
  emptyMediaTally,
  type EmbeddingInput,
  type EmbeddingPartType,
  type EmbeddingResult,
  type MediaTally,
} from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';
import { UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import {
  acceptedParts,
  checkEmbeddingShape,
  prepareEmbeddingInputs,
  type EmbeddingRowInputs,
  type MediaFetch,
} from './embedding-inputs.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { Charge, FailureCharge, GenerationPipeline, Plan, Recipe } from './generation-pipeline.ts';
import { servingRows, type ServingRow } from './serving-rows.ts';

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
  /** What the serving row did not take and dropped (`strictParams: false`), as the client named it. */
  droppedParameters: string[];
}

/** An answer as a row served it, with the size it was asked for (none where the row drops it). */
type ServedEmbedding = EmbeddingResult & { dimensionsSent: number | undefined };

/** A row that can embed, with the part types it takes and the dimensions the request asks of it. */
interface EmbeddingRow extends ServingRow<'embeddings'>, EmbeddingRowInputs {
  dimensions: number | undefined;
}

/** An embedding request after the capability gate, and (once held) its inputs as they are sent. */
interface EmbeddingPlan extends Plan<EmbeddingRow> {
  rows: EmbeddingRow[];
  model: CatalogModel;
  pricing: ModelPricing;
  input: EmbeddingGenerationInput;
  /** The inputs with their media fetched and decoded, once the hold admitted the request. */
  inputs: readonly EmbeddingInput[];
  media: MediaTally;
  /** Tokens that providers reported for calls of attempts that failed: what a request failing in the end is charged. */
  usedByFailures: number;
}

/** Tokens a provider may add around each input (start and end markers). */
const tokensPerInput = 8;

/**
 * A bound no tokenizer exceeds: byte-level and byte-fallback tokenizers spend at most one token per UTF-8
 * byte. Holding it means a settled embedding call never costs more than was held.
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

/** The recipe for embeddings: inputs checked and held at a bound no tokenizer passes, media fetched once held. */
class EmbeddingRecipe
  implements Recipe<EmbeddingGenerationInput, EmbeddingRow, EmbeddingPlan, ServedEmbedding, EmbeddingAnswer>
{
  readonly modality = 'text';

  constructor(
    private readonly pipeline: GenerationPipeline,
    private readonly fetchMedia: MediaFetch,
    /** All media one request downloads, in bytes. */
    private readonly maxMediaBytes: number,
  ) {}

  plan(model: CatalogModel, input: EmbeddingGenerationInput): EmbeddingPlan {
    const pricing = requirePricing(model);
    const rows = model.outputModalities.includes('embedding') ? this.rows(model) : [];
    if (rows.length === 0)
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not make embeddings`);
    const winner = rows[0]!;
    winner.dimensions = gateDimensions(model.modelId, winner.row.capabilities, input);
    // Admission before work: the shape is checked and the most the request can cost is held before any
    // media is decoded or downloaded, so a refused request costs the gateway next to nothing.
    const bound = checkEmbeddingShape(model.modelId, input.inputs, winner.accepted);
    return {
      rows,
      holdNanos: embeddingCost(pricing, maximumTokens(input.inputs, bound), bound),
      recordedRequest: { ...input.recordedRequest, operation: 'embeddings', inputs: input.inputs.length },
      model,
      pricing,
      input,
      inputs: input.inputs,
      media: emptyMediaTally(),
      usedByFailures: 0,
    };
  }

  async prepare(plan: EmbeddingPlan): Promise<void> {
    const [winner, ...others] = plan.rows;
    const { inputs, media } = await prepareEmbeddingInputs(plan.input.inputs, winner!, {
      fetchMedia: this.fetchMedia,
      maxBytes: this.maxMediaBytes,
    });
    plan.inputs = inputs;
    plan.media = media;
    if (others.length === 0) return;
    // Rows that cannot take these inputs (as asked and as they will be sent) or this size are no fallback for this request.
    const asked = partTypes(plan.input.inputs);
    const sent = partTypes(inputs);
    plan.rows = [
      winner!,
      ...others.filter((row) => {
        if (!asked.every((type) => row.accepted.includes(type)) || !sent.every((type) => row.carries.includes(type)))
          return false;
        try {
          row.dimensions = gateDimensions(plan.model.modelId, row.row.capabilities, plan.input);
          // A row that would drop the size the winner carries answers vectors of another size: no fallback.
          return row.dimensions !== undefined || winner!.dimensions === undefined;
        } catch {
          return false;
        }
      }),
    ];
  }

  async dispatch(row: EmbeddingRow, plan: EmbeddingPlan): Promise<ServedEmbedding> {
    let used = 0;
    try {
      const result = requireOneSize(
        await row.adapter.embed(
          {
            upstreamModel: row.upstreamModel,
            inputs: plan.inputs,
            dimensions: row.dimensions,
            reportUsage: (tokens) => (used += tokens),
          },
          { target: row.target },
        ),
        row.dimensions,
      );
      return { ...result, dimensionsSent: row.dimensions };
    } finally {
      plan.usedByFailures += used;
    }
  }

  /** The vectors go out now; the hold covers the cost until the settlement replaces it. */
  served(result: ServedEmbedding, plan: EmbeddingPlan, charge: Charge): EmbeddingAnswer {
    const counted = result.inputTokens === undefined;
    const inputTokens = counted ? countedTokens(plan.inputs) : wholeTokens(result.inputTokens);
    charge.settle('succeeded', embeddingCost(plan.pricing, inputTokens, plan.media), {
      promptTokens: inputTokens,
      totalTokens: inputTokens,
      ...mediaUsage(plan.media),
      ...(counted ? { countedByGateway: true } : {}),
    });
    const dropped = plan.input.dimensions !== undefined && result.dimensionsSent === undefined;
    return {
      vectors: result.vectors,
      inputTokens,
      droppedParameters: dropped ? [plan.input.dimensionsField ?? 'dimensions'] : [],
    };
  }

  /**
   * A request that failed in the end is charged the tokens its providers reported for the calls that did
   * answer (usually none); the hold caps it.
   */
  failure(plan: EmbeddingPlan): FailureCharge | undefined {
    const used = wholeTokens(plan.usedByFailures);
    if (used === 0) return undefined;
    return {
      costNanos: embeddingCost(plan.pricing, used, emptyMediaTally()),
      usage: { promptTokens: used, totalTokens: used },
    };
  }

  /** The model's provider rows that can embed, best first, with the part types each takes. */
  private rows(model: CatalogModel): EmbeddingRow[] {
    return servingRows(this.pipeline.rowSources, model, 'embeddings').map((row) => ({
      ...row,
      accepted: acceptedParts(row.row.capabilities, model.inputModalities, row.adapter.parts),
      carries: row.adapter.parts,
      dimensions: undefined,
    }));
  }
}

/** The pipeline for embeddings: resolve -> check inputs and limits -> gate -> hold -> dispatch (with fallback) -> settle. */
export class EmbeddingGeneration {
  private readonly recipe: EmbeddingRecipe;

  constructor(
    private readonly pipeline: GenerationPipeline,
    fetchMedia: MediaFetch,
    /** All media one request downloads, in bytes. */
    maxMediaBytes: number,
  ) {
    this.recipe = new EmbeddingRecipe(pipeline, fetchMedia, maxMediaBytes);
  }

  embed(context: RequestContext, input: EmbeddingGenerationInput): Promise<EmbeddingAnswer> {
    return this.pipeline.run(context, this.recipe, input);
  }
}

/** `dimensions` only where the row's capabilities bound it (variable-dimension models), within the bounds. */
export function gateDimensions(
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

/**
 * An answer's vectors all of one size, the size asked where the row was sent one: vectors of other sizes are a
 * protocol failure (another row may serve), never passed on as the answer.
 */
function requireOneSize(result: EmbeddingResult, dimensions: number | undefined): EmbeddingResult {
  const size = dimensions ?? result.vectors[0]?.length;
  const odd = result.vectors.find((vector) => vector.length !== size);
  if (odd !== undefined)
    throw new UpstreamUnreachableError(
      'protocol',
      `the upstream answered a vector of ${odd.length} values where ${size} were due`,
    );
  return result;
}
