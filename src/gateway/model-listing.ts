import { effectiveCapabilities, type CatalogModel } from '../catalog/catalog.ts';
import type { Capabilities, ParamConstraints } from '../domain/capabilities.ts';
import { pricesInUsd, type PricingEntry } from '../domain/model-pricing.ts';
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
    const { inputPerMTok, outputPerMTok, inputPerImage, inputPerAudioSecond, inputPerVideoSecond, inputPerFile } =
      pricesInUsd(pricing);
    const prices = {
      inputPerMTok,
      outputPerMTok,
      inputPerImage,
      inputPerAudioSecond,
      inputPerVideoSecond,
      inputPerFile,
      currency: 'USD',
    };
    fields[model.outputModalities.includes('embedding') ? 'embeddingPricing' : 'chatPricing'] = prices;
  }
  return fields;
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
