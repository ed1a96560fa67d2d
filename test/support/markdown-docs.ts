import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const repositoryRoot = path.resolve(import.meta.dirname, '../..');

/** README.md and every page of docs/, as paths relative to the repository. */
export function documentationFiles(): string[] {
  const pages = readdirSync(path.join(repositoryRoot, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...pages.sort().map((name) => `docs/${name}`)];
}

/**
 * A fenced block whose info string is `sh runnable` or `ts runnable`: an example that works as written against a
 * gateway started with the shipped gateway.yaml (sandbox models only), with `$KEY` an API key, `$TOKEN` a session
 * of the same account and `$ADMIN` the admin token.
 */
export interface RunnableBlock {
  file: string;
  line: number;
  language: 'sh' | 'ts';
  code: string;
}

export function runnableBlocks(file: string): RunnableBlock[] {
  const lines = readFileSync(path.join(repositoryRoot, file), 'utf8').split('\n');
  const blocks: RunnableBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = /^```(\w+)(.*)$/.exec(lines[index]!);
    if (!opening) continue;
    const end = lines.indexOf('```', index + 1);
    if (end < 0) throw new Error(`${file}:${index + 1}: unclosed code block`);
    const language = opening[1];
    if (opening[2]!.trim() === 'runnable') {
      if (language !== 'sh' && language !== 'ts') throw new Error(`${file}:${index + 1}: only sh and ts run`);
      blocks.push({ file, line: index + 1, language, code: lines.slice(index + 1, end).join('\n') });
    }
    index = end;
  }
  return blocks;
}

const shapeMarker = '@@shape@@';

/**
 * The script to run for a shell block, and the answer shapes it promises: a comment under a command that starts
 * with `# {` or `# [` (continued on the next `#` lines) is the JSON shape of that command's answer. Each such
 * comment becomes a marker in the output, so the answer before it can be compared.
 */
export function shellScript(code: string): { script: string; shapes: unknown[] } {
  const lines = code.split('\n');
  const out: string[] = [];
  const shapes: unknown[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!/^# [[{]/.test(lines[index]!)) {
      out.push(lines[index]!);
      continue;
    }
    let text = lines[index]!.slice(2);
    while (index + 1 < lines.length && lines[index + 1]!.startsWith('#  ')) text += lines[++index]!.slice(1);
    shapes.push(JSON.parse(text));
    out.push(`printf '\\n${shapeMarker}\\n'`);
  }
  return { script: `set -euo pipefail\n${out.join('\n')}\n`, shapes };
}

/** The last line of output before each marker: the answers the shapes describe. */
export function answersBeforeMarkers(stdout: string): string[] {
  const segments = stdout.split(`${shapeMarker}\n`);
  return segments.slice(0, -1).map((segment) => segment.trim().split('\n').at(-1) ?? '');
}

/** Where `actual` lacks what `expected` shows: its keys (recursively), its types, the shape of its list items. */
export function shapeMismatches(expected: unknown, actual: unknown, at = '$'): string[] {
  if (expected === null) return actual === null ? [] : [`${at}: expected null, got ${JSON.stringify(actual)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: expected a list, got ${JSON.stringify(actual)}`];
    if (expected.length === 0) return [];
    if (actual.length === 0) return [`${at}: expected items`];
    return actual.flatMap((item, index) => shapeMismatches(expected[0], item, `${at}[${index}]`));
  }
  if (typeof expected === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
      return [`${at}: expected an object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([key, value]) =>
      key in actual
        ? shapeMismatches(value, (actual as Record<string, unknown>)[key], `${at}.${key}`)
        : [`${at}.${key} is missing`],
    );
  }
  return typeof actual === typeof expected
    ? []
    : [`${at}: expected a ${typeof expected}, got ${JSON.stringify(actual)}`];
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

/** Relative links of a markdown file (outside code) whose file or heading does not exist. */
export function brokenLinks(file: string): string[] {
  const absolute = path.join(repositoryRoot, file);
  const text = readFileSync(absolute, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target!)) continue;
    const [linkPath, anchor] = target!.split('#') as [string, string | undefined];
    const linked = linkPath ? path.resolve(path.dirname(absolute), linkPath) : absolute;
    if (!linked.startsWith(repositoryRoot) || !existsSync(linked)) broken.push(`${target}: no such file`);
    else if (anchor && linked.endsWith('.md') && !anchorsOf(linked).has(anchor))
      broken.push(`${target}: no such heading`);
  }
  return broken;
}
