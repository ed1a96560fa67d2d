import { effectiveCapabilities, type CatalogModel } from '../catalog/catalog.ts';
import { nanosToUsd } from '../domain/money.ts';

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
    const usd = (nanos: bigint | undefined) => (nanos === undefined ? undefined : nanosToUsd(nanos));
    const prices = {
      inputPerMTok: usd(pricing.inputNanosPerMTok),
      outputPerMTok: usd(pricing.outputNanosPerMTok),
      inputPerImage: usd(pricing.imageNanos),
      inputPerAudioSecond: usd(pricing.audioSecondNanos),
      inputPerVideoSecond: usd(pricing.videoSecondNanos),
      inputPerFile: usd(pricing.fileNanos),
      currency: 'USD',
    };
    fields[model.outputModalities.includes('embedding') ? 'embeddingPricing' : 'chatPricing'] = prices;
  }
  return fields;
}
