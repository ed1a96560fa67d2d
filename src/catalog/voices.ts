import type { VoiceEntry } from '../config/config-schema.ts';

export interface VoiceFilter {
  gender?: string;
  age?: string;
  category?: string;
  /** A BCP-47 code; `en` matches `en-US` and `en-GB` too. */
  language?: string;
  resourceId?: string;
}

/** The spec's Voice: the configured entry, and whether it takes `contextTexts` (2.0 voices only). */
export type Voice = VoiceEntry & { capabilities: { contextTexts: boolean } };

/** The resource of the voices that take context texts. */
const contextResource = 'seed-tts-2.0';

/**
 * The text-to-speech voices of gateway.yaml whose model (`resourceId`) the catalog serves, asked of the catalog at
 * each read: a model the operator switches on or off at runtime, or whose provider a runtime key makes active,
 * brings its voices with it or takes them away at once, not at the next reload.
 */
export class VoiceCatalog {
  private voices: ReadonlyMap<string, Voice>;

  constructor(
    entries: readonly VoiceEntry[],
    private readonly isActive: (modelId: string) => boolean,
  ) {
    this.voices = voicesOf(entries);
  }

  /** The voices of a reloaded configuration. */
  replace(entries: readonly VoiceEntry[]): void {
    this.voices = voicesOf(entries);
  }

  find(voiceType: string): Voice | undefined {
    const voice = this.voices.get(voiceType);
    return voice && this.isActive(voice.resourceId) ? voice : undefined;
  }

  list(filter: VoiceFilter): Voice[] {
    const language = filter.language?.toLowerCase();
    return [...this.voices.values()].filter(
      (voice) =>
        this.isActive(voice.resourceId) &&
        (filter.gender === undefined || voice.gender === filter.gender) &&
        (filter.age === undefined || voice.age === filter.age) &&
        (filter.category === undefined || voice.categories.includes(filter.category)) &&
        (filter.resourceId === undefined || voice.resourceId === filter.resourceId) &&
        (language === undefined ||
          voice.languages.some(
            (entry) =>
              entry.language.toLowerCase() === language || entry.language.toLowerCase().startsWith(`${language}-`),
          )),
    );
  }
}

function voicesOf(entries: readonly VoiceEntry[]): ReadonlyMap<string, Voice> {
  return new Map(
    entries.map((entry) => [
      entry.voiceType,
      { ...entry, capabilities: { contextTexts: entry.resourceId === contextResource } },
    ]),
  );
}
