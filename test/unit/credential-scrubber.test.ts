import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { CredentialScrubber, credentialForms } from '../../src/providers/shared/credential-scrubber.ts';

const key = 'sk-live-7Qm2Xv9Lp4Rt8Wz1';
const headerValue = 'org-5521-9930-4417';
const secrets = [new Secret(key).bearer(), new Secret(headerValue)];

/** The text as the whole answer would read with every credential cut out. */
const cutWhole = (text: string) =>
  text.replaceAll(`Bearer ${key}`, '[redacted]').replaceAll(key, '[redacted]').replaceAll(headerValue, '[redacted]');

/** Feeds the chunks through a scrubber and gives back what it let out, chunk by chunk. */
async function scrubbed(chunks: string[]): Promise<string[]> {
  const scrubber = new CredentialScrubber(credentialForms(secrets));
  const out: string[] = [];
  scrubber.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')));
  const ended = new Promise((resolve) => scrubber.on('end', resolve));
  for (const chunk of chunks) scrubber.write(Buffer.from(chunk));
  scrubber.end();
  await ended;
  return out;
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
  it('searches for each secret and the bare key of a bearer header, and for no value too short to be one', () => {
    const forms = credentialForms([...secrets, new Secret('v2'), new Secret('')]).map(String);
    expect(forms.sort()).toEqual([`Bearer ${key}`, headerValue, key].sort());
  });

  it('cuts every credential out however the answer is split into chunks, and changes nothing else', async () => {
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
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 12 }),
        fc.array(fc.nat(400), { maxLength: 8 }),
        async (pieces, cuts) => {
          const text = pieces.join('');
          const out = (await scrubbed(splitAt(text, cuts))).join('');
          expect(out).toBe(cutWhole(text));
          for (const secret of [key, headerValue]) expect(out).not.toContain(secret);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('lets an event through as it arrives unless its end could begin a credential', async () => {
    const scrubber = new CredentialScrubber(credentialForms(secrets));
    const read = () => (scrubber.read() as Buffer | null)?.toString('utf8') ?? '';
    scrubber.write(Buffer.from('data: {"delta":"hi"}\n\n'));
    expect(read()).toBe('data: {"delta":"hi"}\n\n');
    scrubber.write(Buffer.from('data: {"error":"bad key sk-li'));
    expect(read()).toBe('data: {"error":"bad key ');
    scrubber.write(Buffer.from('ve-7Qm2Xv9Lp4Rt8Wz1"}\n\n'));
    expect(read()).toBe('[redacted]"}\n\n');
    // The beginning of a credential that never completes is let out at the end.
    scrubber.write(Buffer.from('sk-live'));
    expect(read()).toBe('');
    scrubber.end();
    expect(read()).toBe('sk-live');
  });
});
