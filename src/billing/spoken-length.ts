/**
 * How long a prompt takes to say, for the hold of a generation with reference (billed per second the model
 * makes, which is known only after). An indication, documented as such: CJK characters at about 4 a
 * second, other letters and digits at about 14 (some 170 words a minute), the `@AudioN` tags unsaid, a
 * second of lead-in and tail, at the asked speech rate (100 is twice as fast, -50 half as fast).
 */
const wideCharacterMs = 250;
const narrowCharacterMs = 70;
const marginMs = 1000;

const wide = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const spoken = /[\p{L}\p{N}]/u;

export function referenceSecondsEstimate(textPrompt: string, speechRate = 0): number {
  let ms = 0;
  for (const character of textPrompt.replace(/@Audio[123]/g, '')) {
    if (wide.test(character)) ms += wideCharacterMs;
    else if (spoken.test(character)) ms += narrowCharacterMs;
  }
  return (ms / (1 + speechRate / 100) + marginMs) / 1000;
}
