/**
 * The client matrix's cells and what each is expected to do: every client, the features it is driven through,
 * and, per upstream protocol, `pass` or a refusal (a 400 naming the parameter that cannot be carried). The
 * client test files run these cells; docs/clients.md is generated from them (works-with.ts), so it says what
 * the gateway promises, not what one run happened to see.
 */

export const upstreams = ['openai', 'anthropic', 'gemini', 'sandbox'] as const;
export type Upstream = (typeof upstreams)[number];

export const features = [
  'generate',
  'stream',
  'tools-multi-step',
  'tools-parallel',
  'structured',
  'structured-stream',
  'image-input',
  'embeddings',
  'error-401',
  'error-403',
  'error-429',
  'error-400',
  'stream-cut',
] as const;
export type Feature = (typeof features)[number];

/** What each feature means, for the printed matrix and the docs. */
export const featureMeanings: Record<Feature, string> = {
  generate: 'one answer, not streamed',
  stream: 'one answer, streamed',
  'tools-multi-step': 'the model calls a tool, the client runs it and sends the result back, the model answers',
  'tools-parallel': 'a turn of two tool calls and their two results carried back to the model',
  structured: 'an answer following a JSON schema (the client parses and checks it)',
  'structured-stream': 'the same, streamed',
  'image-input': 'a PNG in the prompt',
  embeddings: 'two texts embedded with the client defaults',
  'error-401': 'a bad key: the error carries the status and the gateway message',
  'error-403': 'an empty balance: likewise',
  'error-429': 'a spent daily cap: likewise, without the client retrying it for long',
  'error-400': 'an image sent to a model without image input: likewise',
  'stream-cut': 'an upstream stream cut mid-answer surfaces as an error, not a shorter success',
};

/** The upstreams a feature is tried against: Anthropic embeds nothing, and the sandbox's streams are never cut. */
export const featureUpstreams: Record<Feature, readonly Upstream[]> = {
  generate: upstreams,
  stream: upstreams,
  'tools-multi-step': upstreams,
  'tools-parallel': upstreams,
  structured: upstreams,
  'structured-stream': upstreams,
  'image-input': upstreams,
  embeddings: ['openai', 'gemini', 'sandbox'],
  'error-401': upstreams,
  'error-403': upstreams,
  'error-429': upstreams,
  'error-400': upstreams,
  'stream-cut': ['openai', 'anthropic', 'gemini'],
};

/** `pass`, or `refused-400:<parameter>`: the feature cannot be carried, and the 400 names that parameter. */
export type Expectation = 'pass' | `refused-400:${string}`;

export interface ClientCells {
  /** The packages driven, with the versions pinned in package.json. */
  packages: readonly string[];
  /** The gateway surface the client speaks. */
  surface: 'alpha' | 'beta' | 'gamma';
  /** The base URL the client is given, after `http://HOST:PORT`. */
  basePath: string;
  /** A setting changed from the client's default, and why (the point of the matrix is the defaults). */
  settings?: string;
  features: readonly Feature[];
  /** Features of the matrix not driven through this client, and why. */
  notDriven?: string;
  /** Cells that are not `pass`, by feature and upstream. */
  refusals?: Partial<Record<Feature, Partial<Record<Upstream, Expectation>>>>;
}

const errorFeatures: readonly Feature[] = ['error-401', 'error-403', 'error-429', 'error-400', 'stream-cut'];
/** Every feature of a chat model: all but embeddings and the errors. */
const textFeatures = features.filter((feature) => feature !== 'embeddings' && !errorFeatures.includes(feature));

/** An AI SDK provider: its retries are set off where a refusal may come (the defaults' one departure). */
const aiSdk = (
  provider: string,
  {
    surface,
    basePath,
    embeddings = [],
  }: { surface: ClientCells['surface']; basePath: string; embeddings?: readonly Feature[] },
): ClientCells => ({
  packages: ['ai', provider],
  surface,
  basePath,
  settings:
    'maxRetries: 0 on its non-streamed calls (generate, image input, and the error cells made of them): the AI ' +
    'SDK retries any 429 twice, 2 s and 4 s apart, whatever x-should-retry says',
  features: [...textFeatures, ...embeddings, ...errorFeatures],
});

export const clients = {
  // With its default `store: true` the provider sends the text of earlier answers back as references to items
  // OpenAI stored; translated, the turn goes without that text (named), and the tool loop carries on.
  'ai-sdk/openai': aiSdk('@ai-sdk/openai', { surface: 'alpha', basePath: '/api/alpha/v1', embeddings: ['embeddings'] }),
  'ai-sdk/openai-compatible': aiSdk('@ai-sdk/openai-compatible', { surface: 'alpha', basePath: '/api/alpha/v1' }),
  'ai-sdk/anthropic': aiSdk('@ai-sdk/anthropic', { surface: 'beta', basePath: '/api/beta/v1' }),
  'ai-sdk/google': aiSdk('@ai-sdk/google', {
    surface: 'gamma',
    basePath: '/api/gamma/v1beta',
    embeddings: ['embeddings'],
  }),
  'langchain/openai': {
    packages: ['@langchain/core', '@langchain/openai'],
    surface: 'alpha',
    basePath: '/api/alpha/v1',
    features: [...textFeatures, 'embeddings', ...errorFeatures],
  },
  'langchain/anthropic': {
    packages: ['@langchain/core', '@langchain/anthropic'],
    surface: 'beta',
    basePath: '/api/beta',
    settings:
      "withStructuredOutput(schema, { method: 'jsonSchema' }) in the structured-stream cell: with the default method " +
      '(a forced tool call) withStructuredOutput().stream() fails, whatever the upstream and on the real API too, ' +
      'because @langchain/core 1.1.46 and later no longer merge streamed content items whose types differ once ' +
      '`_delta` is stripped (`tool_use` and its `input_json_delta`), so AnthropicToolsOutputParser reads the ' +
      'tool_use input as "" (langchain-ai/langchainjs#10907, fix proposed in #10923)',
    features: [...textFeatures, ...errorFeatures],
  },
  'langchain/google-genai': {
    packages: ['@langchain/core', '@langchain/google-genai'],
    surface: 'gamma',
    basePath: '/api/gamma',
    features: [
      ...textFeatures.filter((feature) => feature !== 'image-input'),
      'embeddings',
      ...errorFeatures.filter((feature) => feature !== 'error-400'),
    ],
    notDriven:
      'image input (and the 400 cell, which sends an image): the client refuses images itself ("This model does not ' +
      'support images") unless the model id starts with gemini-1.5, gemini-2, gemini-3 or gemma-3, or names vision',
  },
  openai: {
    packages: ['openai'],
    surface: 'alpha',
    basePath: '/api/alpha/v1',
    features: [...textFeatures, 'embeddings', ...errorFeatures],
  },
  '@anthropic-ai/sdk': {
    packages: ['@anthropic-ai/sdk'],
    surface: 'beta',
    basePath: '/api/beta',
    features: [...textFeatures, ...errorFeatures],
  },
  '@google/genai': {
    packages: ['@google/genai'],
    surface: 'gamma',
    basePath: '/api/gamma',
    features: [...textFeatures, 'embeddings', ...errorFeatures],
  },
} satisfies Record<string, ClientCells>;

export type ClientName = keyof typeof clients;

export function expectationOf(client: ClientName, feature: Feature, upstream: Upstream): Expectation {
  const cells: ClientCells = clients[client];
  return cells.refusals?.[feature]?.[upstream] ?? 'pass';
}

/** A cell's name, as the tests and the known gaps spell it. */
export const cellName = (client: ClientName, feature: Feature, upstream: Upstream) =>
  `${client} · ${feature} · ${upstream}`;

/**
 * Cells expected to pass that do not yet, each with why: they run and are reported in the matrix without
 * failing the suite. Delete an entry once its cell passes.
 */
export const knownGaps: Readonly<Record<string, string>> = {};
