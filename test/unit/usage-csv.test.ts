import { describe, expect, it } from 'vitest';
import { csvCell } from '../../src/billing/usage-search.ts';

describe('csvCell', () => {
  it('leaves plain values as they are, and empties for absent ones', () => {
    expect(csvCell('sandbox-echo')).toBe('sandbox-echo');
    expect(csvCell(0.0000306)).toBe('0.0000306');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(null)).toBe('');
  });

  it('quotes a cell with a separator, a quote or a line break, doubling its quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
  });

  it('defuses a cell a spreadsheet would run as a formula', () => {
    for (const formula of ['=1+1', '+cmd', '-2+3', '@SUM(A1)', '\t=1', '\r=1'])
      expect(csvCell(formula).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
  });
});
