import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  answersBeforeMarkers,
  brokenLinks,
  repositoryRoot,
  runnableBlocks,
  shapeMismatches,
  shellScript,
} from '../support/markdown-docs.ts';

const scratch = path.join(repositoryRoot, 'test-output', 'markdown-docs-unit');
mkdirSync(scratch, { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function page(name: string, text: string): string {
  writeFileSync(path.join(scratch, name), text);
  return path.relative(repositoryRoot, path.join(scratch, name));
}

describe('the docs test helpers', () => {
  it('compare an answer with the shape a comment shows: keys, types, the items of lists', () => {
    const shape = { id: 'gen_...', usage: { usdCost: 0.1 }, items: [{ n: 1 }], list: [] };
    expect(
      shapeMismatches(shape, { id: 'gen_1', usage: { usdCost: 2 }, items: [{ n: 3 }], list: [1], extra: true }),
    ).toEqual([]);
    expect(shapeMismatches(shape, { id: 7, usage: {}, items: [{ n: 'x' }], list: {} })).toEqual([
      '$.id: expected a string, got 7',
      '$.usage.usdCost is missing',
      '$.items[0].n: expected a number, got "x"',
      '$.list: expected a list, got {}',
    ]);
    expect(shapeMismatches([{ a: 1 }], [])).toEqual(['$: expected items']);
  });

  it('turn shape comments (continued over lines) into markers and read the answer before each', () => {
    const { script, shapes } = shellScript('echo \'{"a":1}\'\n# {"a":1,\n#  "b":[2]}\n# a plain comment\necho done');
    expect(shapes).toEqual([{ a: 1, b: [2] }]);
    expect(script).toContain('set -euo pipefail');
    expect(script).toContain('# a plain comment');
    expect(answersBeforeMarkers('noise\n{"a":1}\n@@shape@@\ndone\n')).toEqual(['{"a":1}']);
  });

  it('find only the blocks marked runnable, and refuse a language that does not run', () => {
    const file = page('blocks.md', '```sh\nskipped\n```\n\n```sh runnable\necho hi\n```\n\n```ts runnable\n1;\n```\n');
    expect(runnableBlocks(file).map((block) => [block.language, block.code, block.line])).toEqual([
      ['sh', 'echo hi', 5],
      ['ts', '1;', 9],
    ]);
    expect(() => runnableBlocks(page('python.md', '```python runnable\nprint(1)\n```\n'))).toThrow(/only sh and ts/);
  });

  it('report relative links to missing files and headings, not those in code or to other sites', () => {
    page('target.md', '# Target page\n\n## A heading, with punctuation\n');
    const file = page(
      'links.md',
      [
        '# Links',
        '[ok](target.md) [ok](target.md#a-heading-with-punctuation) [ok](#links) [web](https://example.com/x.md)',
        '[gone](missing.md) [no heading](target.md#nowhere) `[in code](missing.md)`',
        '```',
        '[in a block](missing-too.md)',
        '```',
      ].join('\n'),
    );
    expect(brokenLinks(file)).toEqual(['missing.md: no such file', 'target.md#nowhere: no such heading']);
  });
});
