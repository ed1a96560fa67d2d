import { createHash } from 'node:crypto';

/** Where a price version came from: gateway.yaml (at start or reload) or the admin API at runtime. */
export const priceSources = ['file', 'runtime'] as const;
export type PriceSource = (typeof priceSources)[number];

/** JSON with object keys sorted at every depth: two equal price objects print the same whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${fields.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash that says whether two prices of a model are the same version (SHA-256 of the canonical JSON). */
export function pricingHash(pricing: unknown): string {
  return createHash('sha256').update(canonicalJson(pricing)).digest('hex');
}
