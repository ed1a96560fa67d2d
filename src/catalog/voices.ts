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

/** The text-to-speech voices of gateway.yaml, whose model (`resourceId`) is active in the catalog. */
export class VoiceCatalog {
  private voices: ReadonlyMap<string, Voice>;

  constructor(
    entries: readonly VoiceEntry[],
    private readonly isActive: (modelId: string) => boolean,
  ) {
    this.voices = this.activeVoices(entries);
  }

  /** The voices of a reloaded configuration, checked against the catalog as it is now. */
  replace(entries: readonly VoiceEntry[]): void {
    this.voices = this.activeVoices(entries);
  }

  private activeVoices(entries: readonly VoiceEntry[]): ReadonlyMap<string, Voice> {
    return new Map(
      entries
        .filter((entry) => this.isActive(entry.resourceId))
        .map((entry) => [
          entry.voiceType,
          { ...entry, capabilities: { contextTexts: entry.resourceId === contextResource } },
        ]),
    );
  }

  find(voiceType: string): Voice | undefined {
    return this.voices.get(voiceType);
  }

  list(filter: VoiceFilter): Voice[] {
    const language = filter.language?.toLowerCase();
    return [...this.voices.values()].filter(
      (voice) =>
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
