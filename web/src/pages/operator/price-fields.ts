import { usd } from '../../format.ts';
import type { Pricing } from '../../types.ts';

/** A model's prices as flat fields: `perImageByQuality.low` for a price inside a per-quality table. */
export interface PriceField {
  path: string;
  label: string;
  value: number;
}

const labels: Record<string, string> = {
  inputPerMTok: 'Input, per million tokens',
  outputPerMTok: 'Output, per million tokens',
  inputPerImage: 'Input, per image',
  inputPerAudioSecond: 'Input, per audio second',
  inputPerVideoSecond: 'Input, per video second',
  inputPerFile: 'Input, per file',
  perImage: 'Per image',
  perImageByQuality: 'Per image',
  perMCharacters: 'Per million characters',
  perVideoSecond: 'Per video second',
  perVideoSecondByResolution: 'Per video second',
  perAudioSecond: 'Per audio second',
};

/** The price kinds a model uses, each as one field (the edit dialog shows these, and only these). */
export function priceFields(pricing: Pricing | undefined): PriceField[] {
  const fields: PriceField[] = [];
  for (const [kind, value] of Object.entries(pricing ?? {})) {
    const label = labels[kind] ?? kind;
    if (typeof value === 'number') fields.push({ path: kind, label: `${label} (USD)`, value });
    else if (value !== undefined && value !== null)
      for (const [tier, price] of Object.entries(value))
        if (typeof price === 'number')
          fields.push({ path: `${kind}.${tier}`, label: `${label}, ${tier} (USD)`, value: price });
  }
  return fields;
}

/**
 * The prices to send from the fields' texts, in gateway.yaml's `pricing` shape. Texts are sent as typed
 * (as numbers when they read as one): the gateway checks them and its 400 names a bad field.
 */
export function pricingBody(texts: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [path, text] of Object.entries(texts)) {
    const value = text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text);
    const [kind = path, tier] = path.split('.');
    if (tier === undefined) body[kind] = value;
    else {
      const table = body[kind];
      body[kind] = { ...(typeof table === 'object' && table !== null ? table : {}), [tier]: value };
    }
  }
  return body;
}

/** A model's prices on one line, in USD. */
export function pricesText(pricing: Pricing | undefined): string {
  const fields = priceFields(pricing);
  if (fields.length === 0) return 'free';
  return fields.map((field) => `${field.label.replace(' (USD)', '')}: ${usd(field.value)}`).join(' · ');
}

/** A model id in a path: its slashes kept (the route takes the rest of the path), everything else encoded. */
export function modelPath(id: string): string {
  return id.split('/').map(encodeURIComponent).join('/');
}
