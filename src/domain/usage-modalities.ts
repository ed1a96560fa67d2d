/** The spec's `modality` of a usage record (embedding records are `text`). */
export const usageModalities = ['text', 'image', 'video', 'audio'] as const;
export type UsageModality = (typeof usageModalities)[number];

/** The modalities whose outputs are archived media files (the jobs' `kind`). */
export const mediaKinds = ['image', 'video', 'audio'] as const satisfies readonly UsageModality[];
export type MediaKind = (typeof mediaKinds)[number];
