import { describe, expect, it } from 'vitest';
import type { ProviderRow } from '../../src/catalog/catalog.ts';
import type { ParamConstraints } from '../../src/domain/capabilities.ts';
import { defaultResolution, heldSeconds } from '../../src/gateway/video-request-check.ts';

/** What a video job is held for when the request leaves its length or resolution to the model, without HTTP. */
const row = (params?: ParamConstraints): ProviderRow => ({
  providerId: 'ark',
  protocol: 'ark',
  upstreamModel: 'seedance',
  priority: 0,
  capabilities: params ? { video: { params } } : undefined,
  weight: 1,
  operatorCost: undefined,
});
const prompt = { content: [{ type: 'text' as const, text: 'a kite' }] };

describe('the seconds a video request is held for', () => {
  it('holds the seconds asked, whatever the model says', () => {
    expect(
      heldSeconds({ ...prompt, duration: 7 }, row({ duration: { type: 'int', min: 2, max: 12, default: 5 } })),
    ).toBe(7);
  });

  it("holds the model's default when none are asked", () => {
    expect(heldSeconds(prompt, row({ duration: { type: 'int', min: 2, max: 12, default: 5 } }))).toBe(5);
    expect(heldSeconds(prompt, row({ duration: { type: 'enum', values: [4, 8], default: 8 } }))).toBe(8);
  });

  it('holds the longest the model makes when it has no default: the largest step, or the maximum', () => {
    expect(heldSeconds(prompt, row({ duration: { type: 'range', min: 4, max: 12, steps: [4, 8] } }))).toBe(8);
    expect(heldSeconds(prompt, row({ duration: { type: 'range', min: 1, max: 15 } }))).toBe(15);
    expect(heldSeconds(prompt, row({ duration: { type: 'int', min: 2, max: 12 } }))).toBe(12);
  });

  it('holds the usual five seconds when the model says nothing of its length', () => {
    expect(heldSeconds(prompt, row())).toBe(5);
    expect(heldSeconds(prompt, row({ resolution: { type: 'enum', values: ['720p'] } }))).toBe(5);
    expect(heldSeconds(prompt, row({ duration: { type: 'enum', values: [4, 8] } }))).toBe(5);
  });
});

describe('the resolution a video request is priced at when it names none', () => {
  it("is the model's default resolution, when its constraint has one", () => {
    expect(defaultResolution(row({ resolution: { type: 'enum', values: ['480p', '720p'], default: '720p' } }))).toBe(
      '720p',
    );
    expect(defaultResolution(row({ resolution: { type: 'enum', values: ['480p', '720p'] } }))).toBeUndefined();
    expect(defaultResolution(row())).toBeUndefined();
  });
});
