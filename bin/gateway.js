#!/usr/bin/env -S node --max-semi-space-size=16
// V8's young generation is capped at 16 MiB per semi-space (Node 20's ceiling; Node 24 lets it grow to several
// times that), which keeps the gateway's memory near 100 MiB lower at no measurable cost in throughput.
// Runs the compiled gateway from dist/, which `npm ci` builds from src/ (the `prepare` script; `npm run build` redoes it).
import { existsSync } from 'node:fs';
import module from 'node:module';

// The code V8 compiles of the gateway and its dependencies is kept on disk (Node's compile cache: in the system's
// temporary directory, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a start or a command
// after the first compiles none of it again: about a quarter of a command's CPU. A directory that cannot be
// written leaves it off, and a changed file is compiled anew.
module.enableCompileCache?.();

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gateway: dist/ is missing; build it with `npm run build`\n');
  process.exit(1);
}
// Before anything else is loaded: the gateway's dependencies resolve their own modules the shorter way
// (dist/cli/module-resolution.js says why).
const { installModuleResolution } = await import(new URL('../dist/cli/module-resolution.js', import.meta.url).href);
installModuleResolution();
await import(main.href);
