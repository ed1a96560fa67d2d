#!/usr/bin/env node
// Runs the compiled gateway from dist/, which `npm ci` builds from src/ (the `prepare` script; `npm run build` redoes it).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gateway: dist/ is missing; build it with `npm run build`\n');
  process.exit(1);
}
await import(main.href);
