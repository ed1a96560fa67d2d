import { describe, expect, it } from 'vitest';
import { downloadName } from '../../src/storage/download-name.ts';

describe('downloadName', () => {
  it.each([
    ['images/gen_1/0.png', 'gen_1-0.png'],
    ['videos/gen_abc/2.mp4', 'gen_abc-2.mp4'],
    ['a.png', 'a.png'],
    ['x/../"evil\r\nset-cookie: a=b;.html', '-_evil__set-cookie__a_b_.html'],
    ['x/.hidden', 'x-.hidden'],
    ['.env', 'env'],
    ['/', 'download'],
    ['images/gen_1/façade ☃.png', 'gen_1-fa_ade__.png'],
  ])('names %j as %j', (key, name) => {
    expect(downloadName(key)).toBe(name);
  });
});
