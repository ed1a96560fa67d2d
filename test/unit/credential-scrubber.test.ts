import fc from 'fast-check';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { CredentialScrubber, credentialForms } from '../../src/domain/credential-scrubber.ts';
import { ScrubbingAgent } from '../../src/providers/shared/scrubbing-agent.ts';

const key = 'sk-live-7Qm2Xv9Lp4Rt8Wz1';
const headerValue = 'org-5521-9930-4417';
// A key of the base64 alphabet, as some providers issue them, and spellings an answer may quote it in.
const slashed = 'wJalrXUtnFEMI/K7MDENG+bPxRfi/CYEXAMPLEKEY==';
const slashedSpellings = [
  slashed,
  slashed.replaceAll('/', '\\/'), // JSON with escaped slashes (PHP)
  encodeURIComponent(slashed), // a URL's query, hex upper-case
  encodeURIComponent(slashed).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()), // hex lower-case (.NET)
  slashed.replaceAll('+', '%2B').replaceAll('=', '%3D'), // Python's quote(): the slash left alone
  slashed.replaceAll('/', '%2F'), // Go's PathEscape: only the slash
  slashed.replaceAll('+', '\\u002B').replaceAll('=', '\\u003D'), // .NET's JSON: + and = escaped, / not
];
const secrets = [new Secret(key).bearer(), new Secret(headerValue), new Secret(slashed)];

/** The text as the whole answer would read with each of `spellings` cut out, the longest first. */
const cutWhole = (text: string, spellings = [...slashedSpellings, key, headerValue]) =>
  [...spellings]
    .sort((a, b) => b.length - a.length)
    .reduce((cut, spelling) => cut.replaceAll(spelling, '[redacted]'), text);

/** What a scrubber lets out of the chunks, one string a chunk (and one for the end, if anything was kept). */
function scrubbed(chunks: string[], of = secrets): string[] {
  const scrubber = new CredentialScrubber(credentialForms(of));
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
    const forms = credentialForms([
      new Secret(key).bearer(),
      new Secret(headerValue),
      new Secret('v2'),
      new Secret(''),
    ]);
    const scrubber = new CredentialScrubber(forms);
    expect(forms).toHaveLength(2);
    expect(String(scrubber.next(Buffer.from(`Bearer ${key} ${headerValue} v2 Bearer`)))).toBe(
      'Bearer [redacted] [redacted] v2 Bearer',
    );
    // A credential that holds another is cut whole, not around the other.
    const inner = new CredentialScrubber(credentialForms([new Secret('Q7vX2mK9'), new Secret('sk-Q7vX2mK9-tail')]));
    expect(String(inner.next(Buffer.from('key sk-Q7vX2mK9-tail and Q7vX2mK9.')))).toBe(
      'key [redacted] and [redacted].',
    );
    expect(JSON.stringify({ inner })).toBe('{"inner":"[redacted]"}');
  });

  it('cuts a credential out as the encoders answers are commonly written with spell it back', () => {
    const scrubber = new CredentialScrubber(credentialForms([new Secret(`Bearer ${slashed}`)]));
    for (const spelling of slashedSpellings) {
      expect(String(scrubber.next(Buffer.from(`{"error":"invalid key ${spelling}"}`)))).toBe(
        '{"error":"invalid key [redacted]"}',
      );
    }
    // Letters and digits are the key's own: a spelling that changes one is another text.
    expect(String(scrubber.next(Buffer.from(slashed.replace('w', '%77'))))).toBe(slashed.replace('w', '%77'));
    // A value no URL can encode (a lone surrogate) is searched for as its bytes are written.
    const odd = 'sk-odd-\ud800-value';
    const oddScrubber = new CredentialScrubber(credentialForms([new Secret(odd)]));
    expect(String(oddScrubber.next(Buffer.from(`x ${odd} y`)))).toBe('x [redacted] y');
  });

  it('cuts every credential out however the answer is split into chunks, and changes nothing else', () => {
    // Text made of pieces that begin or nearly make a credential, so that chunk ends fall inside them.
    const piece = fc.constantFrom(
      key,
      `Bearer ${key}`,
      headerValue,
      key.slice(0, 9),
      key.slice(0, -1),
      ...slashedSpellings,
      slashed.slice(0, 20),
      encodeURIComponent(slashed).slice(0, 18),
      '\\u00',
      '%2',
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
        for (const secret of [key, headerValue, ...slashedSpellings]) expect(out).not.toContain(secret);
      }),
      { numRuns: 300 },
    );
  });

  it('cuts a credential that holds another whole, however the answer is split, and one that ends the answer', () => {
    const inner = 'Q7vX2mK9';
    const outer = `sk-${inner}-tail`;
    const nested = [new Secret(inner), new Secret(outer)];
    expect(scrubbed(['key sk-Q7vX2mK9', '-tail end'], nested).join('')).toBe('key [redacted] end');
    expect(scrubbed(['key sk-Q7vX2mK9', ' end'], nested).join('')).toBe('key sk-[redacted] end');
    // A credential whose last character begins a longer spelling of it (`%` of `%25`), at the very end.
    const percent = [new Secret('abcdefg%')];
    expect(scrubbed(['x abcdefg%'], percent).join('')).toBe('x [redacted]');
    expect(scrubbed(['x abcdefg', '%25 y'], percent).join('')).toBe('x [redacted] y');
    const piece = fc.constantFrom(outer, inner, 'sk-', 'sk-Q7v', `sk-${inner}`, '-tail', ' ', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), fc.array(fc.nat(200), { maxLength: 8 }), (pieces, cuts) => {
        const text = pieces.join('');
        expect(scrubbed(splitAt(text, cuts), nested).join('')).toBe(cutWhole(text, [outer, inner]));
      }),
      { numRuns: 300 },
    );
  });

  it('never lets out a credential whose occurrences overlap one another (its beginning repeats its end)', () => {
    const overlapping = 'Q7m2Xv9=Q';
    const forms = [new Secret(overlapping)];
    const spelled = ['Q7m2Xv9=Q', 'Q7m2Xv9%3DQ', 'Q7m2Xv9\\u003DQ'];
    expect(scrubbed(['Q7m2Xv9=Q7m2Xv9=Q7m2Xv9=Q7', 'm2Xv9=Q'], forms).join('')).not.toContain(overlapping);
    expect(scrubbed(['Q7m2Xv9\\u003DQ7m2Xv9%3DQ7m2Xv9\\u003DQ'], forms).join('')).not.toContain('Q7m2Xv9\\u003DQ');
    const piece = fc.constantFrom(...spelled, 'Q7', 'Q', '7m2Xv9=', '7m2Xv9%3DQ', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(150), { maxLength: 8 }), (pieces, cuts) => {
        const out = scrubbed(splitAt(pieces.join(''), cuts), forms).join('');
        for (const spelling of spelled) expect(out).not.toContain(spelling);
      }),
      { numRuns: 500 },
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
    // Nothing to cut or keep (NUL bytes and all): the very buffer goes on, uncopied.
    const plain = Buffer.from('data: {"delta":"hi\u0000"}\n\n\u0000');
    expect(new CredentialScrubber(credentialForms(secrets)).next(plain)).toBe(plain);
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
