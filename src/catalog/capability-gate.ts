import type { Capabilities, ParamConstraint, ParamConstraints } from '../domain/capabilities.ts';
import { GatewayError } from '../domain/errors.ts';

export interface GateInput {
  modelId: string;
  capabilities: Capabilities | undefined;
  /** Which constraint table applies: `params` for text and embeddings, `image.params` or `video.params` for media. */
  scope: 'text' | 'image' | 'video';
  /**
   * Optional, model-dependent parameters the client actually sent, by request field name. Only these are
   * gated against `text.supportedParameters`; required fields are the surface's business.
   */
  optional: Readonly<Record<string, unknown>>;
  /** Every parameter with a value, checked against the constraint table when it has an entry. */
  values?: Readonly<Record<string, unknown>>;
  /** Parameter -> the field the client spelled it with, where its surface names it otherwise; messages use it. */
  fieldNames?: FieldNames;
}

/** Native parameter name -> the client's own field name (`frequencyPenalty` -> `frequency_penalty`). */
export type FieldNames = Readonly<Record<string, string>>;

export interface GateResult {
  /** Parameters dropped because the model does not support them and `strictParams` is false. */
  dropped: string[];
}

/**
 * Checks request parameters against a model's capabilities. An out-of-range value is always refused; an
 * unsupported parameter is refused unless the model sets `strictParams: false`, in which case it is dropped
 * and reported back so the caller can warn. Messages name the model, never the provider.
 */
export function gateParameters(input: GateInput): GateResult {
  const capabilities = input.capabilities;
  const dropped: string[] = [];
  if (!capabilities) return { dropped };
  const supported = input.scope === 'text' ? capabilities.text?.supportedParameters : undefined;
  if (supported) {
    for (const [name, value] of Object.entries(input.optional)) {
      if (value === undefined || supported.includes(name)) continue;
      if (capabilities.strictParams === false) {
        dropped.push(name);
        continue;
      }
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${input.modelId}" does not support parameter "${spelled(input.fieldNames, name)}"`,
      );
    }
  }
  const table: ParamConstraints | undefined =
    input.scope === 'text' ? capabilities.params : capabilities[input.scope]?.params;
  const values = { ...input.optional, ...input.values };
  for (const [name, constraint] of Object.entries(table ?? {})) {
    const value = values[name];
    if (value === undefined || value === null || dropped.includes(name)) continue;
    const problem = violation(constraint, value);
    if (problem)
      throw new GatewayError(
        'GW_PARAMETER_OUT_OF_RANGE',
        `parameter "${spelled(input.fieldNames, name)}" of model "${input.modelId}" ${problem}`,
      );
  }
  return { dropped };
}

function violation(constraint: ParamConstraint, value: unknown): string | undefined {
  switch (constraint.type) {
    case 'enum':
      return (constraint.values as ReadonlyArray<unknown>).includes(value)
        ? undefined
        : `must be one of ${constraint.values.join(', ')}`;
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
      return value < constraint.min || value > constraint.max
        ? `must be an integer from ${constraint.min} to ${constraint.max}`
        : undefined;
    case 'range': {
      const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof number !== 'number' || !Number.isFinite(number)) return 'must be a number';
      if (constraint.steps)
        return constraint.steps.includes(number) ? undefined : `must be one of ${constraint.steps.join(', ')}`;
      const unit = constraint.unit ? ` ${constraint.unit}` : '';
      return number < constraint.min || number > constraint.max
        ? `must be from ${constraint.min} to ${constraint.max}${unit}`
        : undefined;
    }
  }
}

/** A parameter as the client named it. */
export function spelled(fieldNames: FieldNames | undefined, name: string): string {
  return fieldNames?.[name] ?? name;
}

/**
 * The wire fields a request set, by the native parameter names they are gated under: what the gate's messages
 * call them (of `max_tokens` and `max_completion_tokens`, the one sent). `prefix` names their parent object.
 */
export function clientFieldNames(
  source: Readonly<Record<string, unknown>> | undefined,
  fields: Readonly<Record<string, string>>,
  prefix = '',
): Record<string, string> {
  const names: Record<string, string> = {};
  if (!source) return names;
  // `for...in` over the surface's constant field map: `Object.entries` would build an array of pairs per request.
  for (const field in fields) {
    const value = source[field];
    if (value !== undefined && value !== null && Object.hasOwn(fields, field))
      names[fields[field]!] = `${prefix}${field}`;
  }
  return names;
}

/** The values of a wire request's gated fields, keyed by the native parameter names the gate reads. */
export function nativeParameters(
  source: Readonly<Record<string, unknown>> | undefined,
  fields: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  if (!source) return parameters;
  for (const field in fields) {
    const value = source[field];
    if (value !== undefined && value !== null && Object.hasOwn(fields, field)) parameters[fields[field]!] = value;
  }
  return parameters;
}
