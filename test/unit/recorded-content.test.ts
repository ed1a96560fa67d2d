import { describe, expect, it } from 'vitest';
import { recordedContent, truncatedBase64 } from '../../src/gateway/recorded-content.ts';

/** What a job's persisted request keeps of its content: base64 data and long prompts cut short, the rest as sent. */
describe('recorded content', () => {
  it('keeps the first 32 characters of base64 data and its length', () => {
    const data = 'A'.repeat(40);
    expect(truncatedBase64(data)).toBe(`${'A'.repeat(32)}…(40 characters)`);
    expect(truncatedBase64('A'.repeat(32))).toBe('A'.repeat(32));
  });

  it('cuts base64 parts and prompts over 2,000 characters, in order, and leaves other parts as they came', () => {
    const prompt = 'x'.repeat(2_001);
    const parts = [
      { type: 'text', text: prompt },
      { type: 'imageBase64', data: 'iVBORw0KGgo'.repeat(10), mediaType: 'image/png' },
      { type: 'imageUrl', url: 'https://example.com/a.png' },
      { type: 'text', text: 'short' },
    ];
    expect(recordedContent(parts)).toEqual([
      { type: 'text', text: `${'x'.repeat(2_000)}…(2001 characters)` },
      {
        type: 'imageBase64',
        data: `${'iVBORw0KGgo'.repeat(10).slice(0, 32)}…(110 characters)`,
        mediaType: 'image/png',
      },
      { type: 'imageUrl', url: 'https://example.com/a.png' },
      { type: 'text', text: 'short' },
    ]);
    // The parts given are not changed.
    expect(parts[0]).toEqual({ type: 'text', text: prompt });
  });
});
