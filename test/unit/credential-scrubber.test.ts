import fc from 'fast-check';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { CredentialScrubber, credentialForms } from '../../src/domain/credential-scrubber.ts';
import { ScrubbingAgent } from '../../src/providers/shared/scrubbing-agent.ts';

const key = 'sk-live-7Qm2Xv9Lp4Rt8Wz1';
const headerValue = 'org-5521-9930-4417';
const secrets = [new Secret(key).bearer(), new Secret(headerValue)];

/** The text as the whole answer would read with every credential cut out. */
const cutWhole = (text: string) => text.replaceAll(key, '[redacted]').replaceAll(headerValue, '[redacted]');

/** What a scrubber lets out of the chunks, one string a chunk (and one for the end, if anything was kept). */
function scrubbed(chunks: string[]): string[] {
  const scrubber = new CredentialScrubber(credentialForms(secrets));
  const out = chunks.map((chunk) => scrubber.next(Buffer.from(chunk))?.toString('utf8') ?? '');
  return [...out, scrubber.end()?.toString('utf8') ?? ''];
}

/** Splits text at the given cut points (each taken modulo its length). */
function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(text.slice(from, point));
    from = point;
  }
  chunks.push(text.slice(from));
  return chunks;
}

describe('the credential scrubber', () => {
  it("searches for each secret header's value, for a bearer header's bare key, and for no value too short", () => {
    const forms = credentialForms([...secrets, new Secret('v2'), new Secret('')]).map(String);
    expect(forms).toEqual([key, headerValue]);
    // A credential that holds another is cut whole, not around the other.
    const inner = new CredentialScrubber(credentialForms([new Secret('Q7vX2mK9'), new Secret('sk-Q7vX2mK9-tail')]));
    expect(String(inner.next(Buffer.from('key sk-Q7vX2mK9-tail and Q7vX2mK9.')))).toBe(
      'key [redacted] and [redacted].',
    );
    expect(JSON.stringify({ inner })).toBe('{"inner":"[redacted]"}');
  });

  it('cuts a credential out as JSON escapes it and as a URL encodes it, not only as it was sent', () => {
    // A key of the base64 alphabet, as some providers issue them: a slash, a plus.
    const slashed = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    const scrubber = new CredentialScrubber(credentialForms([new Secret(`Bearer ${slashed}`)]));
    const echoes = [
      `{"error":"invalid key ${slashed}"}`,
      `{"error":"invalid key ${slashed.replaceAll('/', '\\/')}"}`,
      `GET /v1/files?key=${encodeURIComponent(slashed)} refused`,
    ];
    expect(echoes.map((echo) => String(scrubber.next(Buffer.from(echo))))).toEqual([
      '{"error":"invalid key [redacted]"}',
      '{"error":"invalid key [redacted]"}',
      'GET /v1/files?key=[redacted] refused',
    ]);
    // A value no URL can encode (a lone surrogate) is still searched for as it is.
    const odd = `sk-odd-\ud800-value`;
    expect(credentialForms([new Secret(odd)]).map(String)).toContain(Buffer.from(odd).toString());
  });

  it('cuts every credential out however the answer is split into chunks, and changes nothing else', () => {
    // Text made of pieces that begin or nearly make a credential, so that chunk ends fall inside them.
    const piece = fc.constantFrom(
      key,
      `Bearer ${key}`,
      headerValue,
      key.slice(0, 9),
      key.slice(0, -1),
      'Bearer ',
      'sk-',
      'org-5521',
      'data: {"error":{"message":"Incorrect API key provided: ',
      '"}}\n\n',
      ' ',
      'é漢',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(400), { maxLength: 8 }), (pieces, cuts) => {
        const text = pieces.join('');
        const out = scrubbed(splitAt(text, cuts)).join('');
        expect(out).toBe(cutWhole(text));
        for (const secret of [key, headerValue]) expect(out).not.toContain(secret);
      }),
      { numRuns: 300 },
    );
  });

  it('holds back less than a credential, whatever an upstream sends a byte at a time', () => {
    const scrubber = new CredentialScrubber(credentialForms(secrets));
    // Beginnings of the key that never complete it, one byte per chunk.
    const sent = key.slice(0, -1).repeat(500);
    let received = 0;
    let passed = 0;
    let mostHeld = 0;
    for (const byte of sent) {
      received += 1;
      passed += scrubber.next(Buffer.from(byte))?.length ?? 0;
      mostHeld = Math.max(mostHeld, received - passed);
    }
    expect(mostHeld).toBeLessThan(key.length);
    expect(passed + (scrubber.end()?.length ?? 0)).toBe(sent.length);
  });

  it('lets an event through as it arrives unless its end could begin a credential', () => {
    expect(
      scrubbed([
        'data: {"delta":"hi"}\n\n',
        'data: {"error":"bad key sk-li',
        've-7Qm2Xv9Lp4Rt8Wz1"}\n\n',
        // The beginning of a credential that never completes is let out at the end.
        'sk-live',
      ]),
    ).toEqual(['data: {"delta":"hi"}\n\n', 'data: {"error":"bad key ', '[redacted]"}\n\n', '', 'sk-live']);
  });

  it('ends as the agent it wraps does: closed or destroyed, with a promise or a callback', async () => {
    const closed = new Agent();
    await new ScrubbingAgent(closed).close();
    expect(closed.closed).toBe(true);
    const closedByCallback = new Agent();
    await new Promise<void>((resolve) => new ScrubbingAgent(closedByCallback).close(resolve));
    expect(closedByCallback.closed).toBe(true);
    const destroyed = new Agent();
    await new ScrubbingAgent(destroyed).destroy();
    expect(destroyed.destroyed).toBe(true);
    const destroyedWithError = new Agent();
    await new Promise<void>((resolve) =>
      new ScrubbingAgent(destroyedWithError).destroy(new Error('shutting down'), resolve),
    );
    expect(destroyedWithError.destroyed).toBe(true);
  });
});
