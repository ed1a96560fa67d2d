/** The spec's `capabilities` object of a model, as the catalog stores it and the gate reads it. */
export type ParamConstraint =
  | { type: 'enum'; values: ReadonlyArray<string | number>; default?: string | number }
  | { type: 'range'; min: number; max: number; default?: number; unit?: string; steps?: readonly number[] }
  | { type: 'int'; min: number; max: number; default?: number }
  | { type: 'bool'; default?: boolean };

export type ParamConstraints = Readonly<Record<string, ParamConstraint>>;

export interface Capabilities {
  text?: { supportedParameters?: readonly string[] };
  params?: ParamConstraints;
  image?: { params?: ParamConstraints };
  video?: { params?: ParamConstraints };
  inputs?: Readonly<Record<string, unknown>>;
  strictParams?: boolean;
}

export const inputModalities = ['text', 'image', 'file', 'video', 'audio'] as const;
export const outputModalities = ['text', 'image', 'file', 'video', 'audio', 'embedding'] as const;
export type InputModality = (typeof inputModalities)[number];
export type OutputModality = (typeof outputModalities)[number];
