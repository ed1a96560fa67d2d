#!/usr/bin/env -S node --max-semi-space-size=16
// V8's young generation is capped at 16 MiB per semi-space (Node 20's ceiling; Node 24 lets it grow to several
// times that), which keeps the gateway's memory near 100 MiB lower at no measurable cost in throughput.
// Runs the compiled gateway from dist/, which `npm ci` builds from src/ (the `prepare` script; `npm run build` redoes it).
import { existsSync } from 'node:fs';

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
