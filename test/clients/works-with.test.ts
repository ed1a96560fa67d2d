import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { worksWithMarkdown, worksWithPath } from './works-with.ts';

describe('docs/clients.md', () => {
  it('is the table the client matrix expectations make (npm exec -- tsx test/clients/works-with.ts writes it)', () => {
    expect(readFileSync(worksWithPath, 'utf8')).toBe(worksWithMarkdown());
  });
});
