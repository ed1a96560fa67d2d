import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer');

const load = createRequire(import.meta.url);
let tokenizer: Tokenizer | undefined;

/**
 * The o200k tokenizer, loaded on first use: its tables take about 70 MiB, and a gateway whose upstreams
 * report usage never needs them.
 */
export function o200k(): Tokenizer {
  tokenizer ??= load('gpt-tokenizer') as Tokenizer;
  return tokenizer;
}
