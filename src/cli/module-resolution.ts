/**
 * A shorter way through Node's module resolution for the imports inside one dependency, installed by
 * bin/gateway.js before it loads the gateway.
 *
 * Node 24 resolves each `import './x.js'` inside a package by looking up the package's scope again, and that
 * lookup parses the package.json's `exports` field anew. drizzle-orm's is 179 KB, and the gateway loads over a
 * hundred of its modules: every process start (the server, each CLI command) spent about half a second of CPU
 * parsing it again and again, a third of a CLI command's CPU. The relative imports inside such a package resolve
 * to what Node itself would give (the URL relative to the importing module, an ES module as the package's
 * `"type": "module"` says), without that lookup; every other import goes through Node's own resolution.
 */
import { existsSync, readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

/** Packages with an `exports` field large enough that resolving their own modules costs a start measurably. */
const packagesWithLargeExports = ['drizzle-orm'];

/**
 * The directory of `name`'s package.json (a `file:` URL ending in `/`) when the package is an ES module package
 * whose modules import each other by relative `.js` paths; otherwise undefined (left to Node).
 */
function moduleRoot(name: string): string | undefined {
  let entry: URL;
  try {
    entry = new URL(import.meta.resolve(name));
  } catch {
    return undefined;
  }
  for (let directory = new URL('./', entry); directory.pathname !== '/'; directory = new URL('../', directory)) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(new URL('package.json', directory), 'utf8'));
    } catch {
      continue;
    }
    const isModulePackage =
      typeof manifest === 'object' &&
      manifest !== null &&
      'name' in manifest &&
      manifest.name === name &&
      'type' in manifest &&
      manifest.type === 'module';
    return isModulePackage ? directory.href : undefined;
  }
  return undefined;
}

/** Whether `url` is a module of the package at `root` itself, not of a package nested in its node_modules. */
function isOwnModule(url: string, root: string): boolean {
  return url.startsWith(root) && !url.includes('/node_modules/', root.length);
}

/**
 * Whether the package.json at `root` is the nearest to every module of `directory` (a directory below it), as
 * Node's lookup would find: a package.json in between would decide their type instead. Remembered per directory.
 */
const scopedByRoot = new Map<string, boolean>();
function isScopedByRoot(directory: URL, root: string): boolean {
  const known = scopedByRoot.get(directory.href);
  if (known !== undefined) return known;
  const scoped =
    directory.href === root ||
    (directory.href.startsWith(root) &&
      !existsSync(new URL('package.json', directory)) &&
      isScopedByRoot(new URL('../', directory), root));
  scopedByRoot.set(directory.href, scoped);
  return scoped;
}

/**
 * The URL Node would resolve `specifier` to from `parentURL`, for a relative `.js` import between two modules
 * of one of `roots`; undefined for any other import.
 */
export function ownRelativeImport(
  specifier: string,
  parentURL: string | undefined,
  roots: readonly string[],
): string | undefined {
  if (parentURL === undefined || !(specifier.startsWith('./') || specifier.startsWith('../'))) return undefined;
  if (!specifier.endsWith('.js')) return undefined;
  const root = roots.find((candidate) => isOwnModule(parentURL, candidate));
  if (root === undefined) return undefined;
  const url = new URL(specifier, parentURL);
  return isOwnModule(url.href, root) && isScopedByRoot(new URL('./', url), root) ? url.href : undefined;
}

/** The package roots the shortcut applies to, found from this module. */
export function shortcutRoots(): string[] {
  return packagesWithLargeExports.flatMap((name) => moduleRoot(name) ?? []);
}

/** Installs the shortcut for the process; modules loaded before it resolved as usual. */
export function installModuleResolution(): void {
  const roots = shortcutRoots();
  if (roots.length === 0) return;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = ownRelativeImport(specifier, context.parentURL, roots);
      return url === undefined ? nextResolve(specifier, context) : { url, format: 'module', shortCircuit: true };
    },
  });
}
