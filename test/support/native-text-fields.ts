import type { TextCompletionBody } from '../../src/surfaces/native/text-completion-codec.ts';

/** Every optional field of a native text completion, each set, for the tests of what each protocol carries. */
export const citySchema = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
export const lookupTool = {
  type: 'function',
  function: { name: 'lookup', description: 'Finds a city', parameters: citySchema },
} as const;

export const everyNativeField: Omit<TextCompletionBody, 'model'> = {
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'where is Paris' },
  ],
  maxTokens: 50,
  temperature: 0.3,
  topP: 0.9,
  stop: 'END',
  tools: [lookupTool],
  toolChoice: { type: 'function', function: { name: 'lookup' } },
  responseFormat: { type: 'json_schema', json_schema: { name: 'place', schema: citySchema } },
  seed: 7,
  presencePenalty: 0.1,
  frequencyPenalty: 0.2,
  topK: 40,
  repetitionPenalty: 1.1,
  minP: 0.05,
  topA: 0.2,
  logprobs: true,
  topLogprobs: 3,
  logitBias: { '50256': -100 },
  structuredOutputs: true,
  parallelToolCalls: false,
  includeReasoning: true,
  reasoningEffort: 'low',
  webSearchOptions: { search_context_size: 'low' },
  verbosity: 'low',
  thinking: { type: 'enabled', budget_tokens: 2048 },
};
