import { effectiveCapabilities, type CatalogModel } from '../catalog/catalog.ts';
import type { Capabilities } from '../domain/capabilities.ts';
import { pricesInUsd, type PricingEntry } from '../domain/model-pricing.ts';

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
  pricing?: PricingEntry;
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
  if (model.pricing) view.pricing = pricesInUsd(model.pricing);
  return view;
}
