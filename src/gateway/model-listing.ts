import { effectiveCapabilities, type CatalogModel } from '../catalog/catalog.ts';
import type { Capabilities, ParamConstraints } from '../domain/capabilities.ts';
import { pricesInUsd, pricingFieldsByKind, type PricingEntry, type PricingKind } from '../domain/model-pricing.ts';
import { parameterConstraints, ReferenceAudioParameters, TextToSpeechParameters } from '../domain/speech-parameters.ts';

/**
 * The fields every compatibility surface's model list shares (spec: Model, compatibility list items); each
 * surface adds its protocol's own id and shape around them.
 */
export function compatModelFields(model: CatalogModel): Record<string, unknown> {
  const capabilities = effectiveCapabilities(model);
  const fields: Record<string, unknown> = {
    name: model.name ?? model.modelId,
    inputModalities: model.inputModalities,
    outputModalities: model.outputModalities,
    capabilitiesProviderId: model.rows[0]?.providerId,
  };
  if (capabilities) fields.capabilities = capabilities;
  const pricing = model.pricing;
  if (pricing) {
    const kind = pricingKindOf(model);
    fields[kind] = { ...pricedFields(pricesInUsd(pricing), kind), currency: 'USD' };
  }
  return fields;
}

function pricingKindOf(model: CatalogModel): PricingKind {
  const outputs = model.outputModalities;
  if (outputs.includes('embedding')) return 'embeddingPricing';
  if (outputs.includes('video')) return 'videoPricing';
  if (outputs.includes('image')) return 'imagePricing';
  if (outputs.includes('text')) return 'chatPricing';
  return 'audioPricing';
}

function copyPrice<K extends keyof PricingEntry>(target: PricingEntry, source: PricingEntry, field: K): void {
  if (source[field] !== undefined) target[field] = source[field];
}

/** The prices a pricing object of `kind` shows: only those its models are billed by. */
function pricedFields(prices: PricingEntry, kind: PricingKind): PricingEntry {
  const shown: PricingEntry = {};
  for (const field of pricingFieldsByKind[kind]) copyPrice(shown, prices, field);
  return shown;
}

/** The methods of the Gemini API a model answers: text generation and counting, embedding, or none (media). */
export function generationMethodsOf(model: CatalogModel): string[] {
  if (model.outputModalities.includes('embedding')) return ['embedContent', 'batchEmbedContents'];
  if (model.outputModalities.includes('text')) return ['generateContent', 'streamGenerateContent', 'countTokens'];
  return [];
}

/** A catalog entry as the account dashboard shows it: what the model takes and makes, its limits and USD prices; never who serves it. */
export interface PricedModel {
  modelId: string;
  name: string;
  inputModalities: string[];
  outputModalities: string[];
  maxOutputTokens?: number;
  capabilities?: Capabilities;
  /** Of a speech model: the parameters its audio route checks, as the spec's constraints. */
  speechParameters?: ParamConstraints;
  pricing?: PricingEntry;
}

/**
 * The parameters a speech model's route checks: text-to-speech models are priced per character, generation
 * with reference per second of audio made (the speech recipes tell them apart the same way).
 */
function speechParametersOf(model: CatalogModel): ParamConstraints | undefined {
  if (!model.outputModalities.includes('audio') || !model.pricing) return undefined;
  if (model.pricing.characterNanosPerM !== undefined) return parameterConstraints(TextToSpeechParameters);
  if (model.pricing.audioOutputSecondNanos !== undefined) return parameterConstraints(ReferenceAudioParameters);
  return undefined;
}

export function pricedModel(model: CatalogModel): PricedModel {
  const view: PricedModel = {
    modelId: model.modelId,
    name: model.name ?? model.modelId,
    inputModalities: [...model.inputModalities],
    outputModalities: [...model.outputModalities],
  };
  if (model.maxOutputTokens !== undefined) view.maxOutputTokens = model.maxOutputTokens;
  const capabilities = effectiveCapabilities(model);
  if (capabilities) view.capabilities = capabilities;
  const speechParameters = speechParametersOf(model);
  if (speechParameters) view.speechParameters = speechParameters;
  if (model.pricing) view.pricing = pricesInUsd(model.pricing);
  return view;
}
