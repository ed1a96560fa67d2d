import { GatewayError } from '../../domain/errors.ts';

type PartField = 'text' | 'url' | 'data' | 'assetId';

/** A field a content part of its type needs (a text part's text must not be blank); 400 naming the part otherwise. */
export function requiredField(
  part: { type: string } & Partial<Record<PartField, string>>,
  field: PartField,
  where: string,
): string {
  const value = part[field];
  if (value === undefined || (field === 'text' && value.trim() === ''))
    throw new GatewayError('GW_VALIDATION', `${where}: a "${part.type}" part needs "${field}"`);
  return value;
}

/** A part's `url`, which must be http(s): the gateway and its providers fetch nothing else. */
export function httpUrl(url: string, where: string): string {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new GatewayError('GW_VALIDATION', `${where}: "url" must be an http(s) URL`);
  return url;
}
