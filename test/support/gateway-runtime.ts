import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const repositoryRoot = path.resolve(import.meta.dirname, '../..');
const gatewayBin = path.join(repositoryRoot, 'bin/gateway.js');
const probe = pathToFileURL(path.join(import.meta.dirname, 'module-probe.mjs')).href;

/** The Node version package.json pins as a dependency, the one `npm ci` installs and npm scripts run. */
export const pinnedNodeVersion = `v${(JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.node}`;

/** The entry point of the compiled gateway, which bin/gateway.js must load. */
export const compiledMain = pathToFileURL(path.join(repositoryRoot, 'dist/cli/main.js')).href;

/** Environment that makes every Node process started with it record its runtime into `directory` (test/support/module-probe.mjs). */
export function probeEnvironment(directory: string): Record<string, string> {
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${probe}`.trim(), MODULE_PROBE_DIR: directory };
}

export interface RuntimeRecord {
  version: string;
  argv: string[];
  execArgv: string[];
  /** Every module URL the process resolved; null where Node has no module.registerHooks. */
  urls: string[] | null;
  /** Where its compile cache was kept; null when it had none. */
  compileCacheDir: string | null;
}

/** The record of the process that ran bin/gateway.js, once it has exited. */
export function gatewayRecord(directory: string): RuntimeRecord {
  const records = readdirSync(directory).map(
    (file) => JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as RuntimeRecord,
  );
  const gateway = records.filter(
    (record) => record.argv[1] !== undefined && realpathSync(record.argv[1]) === gatewayBin,
  );
  if (gateway.length !== 1)
    throw new Error(
      `expected one bin/gateway.js process, found ${gateway.length} among ${records.map((record) => record.argv.join(' ')).join('; ')}`,
    );
  return gateway[0]!;
}

/** What a TypeScript loader would have brought in: tsx, esbuild, or any TypeScript source. */
export function transpilerTraces(record: RuntimeRecord): string[] {
  return [
    ...record.execArgv.filter((argument) => /tsx|loader|strip-types|transform-types/.test(argument)),
    ...(record.urls ?? []).filter(
      (url) => /\/node_modules\/(tsx|esbuild|@esbuild)\//.test(url) || /\.[cm]?tsx?(\?.*)?$/.test(url),
    ),
  ];
}

/**
 * Packages only some processes need, loaded on first use rather than at start (each costs several MiB of
 * resident memory): the Redis client (with `REDIS_URL`), the S3 client (media in a bucket), and the audio
 * parser (an MP3 or Ogg file measured).
 */
const loadedOnUse = ['ioredis', '@aws-sdk/client-s3', 'music-metadata'];

/** Which of the packages loaded on first use the process loaded. */
export function packagesLoadedOnUse(record: RuntimeRecord): string[] {
  return loadedOnUse.filter((name) => (record.urls ?? []).some((url) => url.includes(`/node_modules/${name}/`)));
}

/**
 * The modules of `name` that reached Node's own resolver (the probe's hook, which runs after bin/gateway.js's):
 * a package whose modules resolve one another the shorter way (src/cli/module-resolution.ts) shows only the
 * entry points the gateway imports.
 */
export function modulesResolvedByNode(record: RuntimeRecord, name: string): string[] {
  return (record.urls ?? []).filter((url) => url.includes(`/node_modules/${name}/`));
}
