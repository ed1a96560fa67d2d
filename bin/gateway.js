#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx gateway` works on a fresh clone without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
