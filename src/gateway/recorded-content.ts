/** Characters of a text part, or of base64 data, that a job's persisted request keeps. */
const recordedCharacters = { text: 2_000, data: 32 };

const shortened = (value: string, keep: number) =>
  value.length > keep ? `${value.slice(0, keep)}…(${value.length} characters)` : value;

/** Base64 data as a job persists it: the first characters and the length. */
export function truncatedBase64(data: string): string {
  return shortened(data, recordedCharacters.data);
}

/** Content parts as a job persists them (usage record, video task): in order, base64 data and long prompts cut short. */
export function recordedContent<Part extends { type: string }>(parts: readonly Part[]): Part[] {
  return parts.map((part) => {
    if ('data' in part && typeof part.data === 'string') return { ...part, data: truncatedBase64(part.data) };
    if (part.type === 'text' && 'text' in part && typeof part.text === 'string')
      return { ...part, text: shortened(part.text, recordedCharacters.text) };
    return part;
  });
}
