/** Values read from a client's loosely typed wire fields: the value when it has the type, else undefined. */
export const numberOf = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
export const booleanOf = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);
export const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
