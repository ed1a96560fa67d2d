import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repositoryRoot = path.resolve(import.meta.dirname, '../..');
const compiled = (file: string) => pathToFileURL(path.join(repositoryRoot, 'dist', file)).href;

/**
 * In a process of its own (a resolve hook is for the whole process): every import Node resolves while the gateway
 * loads, asked of the shortcut too, which must either leave it to Node or give exactly Node's answer.
 */
const comparison = `
import { registerHooks } from 'node:module';
const { ownRelativeImport, shortcutRoots } = await import(process.env.SHORTCUT);
const roots = shortcutRoots();
let taken = 0;
const differing = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    const shortcut = ownRelativeImport(specifier, context.parentURL, roots);
    if (shortcut !== undefined) {
      taken += 1;
      if (shortcut !== resolved.url || resolved.format !== 'module')
        differing.push({ specifier, parent: context.parentURL, shortcut, node: resolved.url, format: resolved.format });
    }
    return resolved;
  },
});
await import(process.env.LOADED);
process.stdout.write(JSON.stringify({ roots, taken, differing }));
`;

describe('the shorter module resolution bin/gateway.js installs', () => {
  it("gives Node's own answer for every import it takes while the whole gateway loads, and takes drizzle-orm's", async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', comparison], {
      env: { PATH: process.env.PATH, SHORTCUT: compiled('cli/module-resolution.js'), LOADED: compiled('main.js') },
      timeout: 60_000,
    });
    const { roots, taken, differing } = JSON.parse(stdout) as { roots: string[]; taken: number; differing: unknown[] };
    // Where Node finds the package: node_modules may be a link (a checkout sharing another's), which Node follows.
    const installed = realpathSync(path.join(repositoryRoot, 'node_modules/drizzle-orm'));
    expect(roots).toEqual([`${pathToFileURL(installed).href}/`]);
    expect(differing).toEqual([]);
    // drizzle-orm's modules the gateway loads import one another some hundreds of times.
    expect(taken).toBeGreaterThan(100);
  });
});
