/**
 * Examples of the beta surface's bodies and answers, in the shapes Anthropic's clients send and read, as the
 * OpenAPI document shows them (the OpenAPI lint checks each against its schema).
 */

export const modelListExample = {
  data: [
    {
      type: 'model',
      id: 'claude-sonnet-4-5',
      display_name: 'Claude Sonnet 4.5',
      created_at: '2026-01-01T00:00:00.000Z',
      name: 'Claude Sonnet 4.5',
      inputModalities: ['text', 'image'],
      outputModalities: ['text'],
    },
  ],
  has_more: false,
  first_id: 'claude-sonnet-4-5',
  last_id: 'claude-sonnet-4-5',
};

export const modelExample = modelListExample.data[0];

export const countTokensRequestExample = {
  model: 'claude-sonnet-4-5',
  messages: [{ role: 'user', content: 'Why is the sky blue?' }],
};

export const countTokensExample = { input_tokens: 14 };

export const embeddingsRequestExample = {
  model: 'seed-embedding-vision',
  input: [{ content: [{ type: 'text', text: 'A lighthouse at dawn' }] }],
  encoding_format: 'float',
};

export const embeddingsListExample = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0213, -0.0374, 0.0561, 0.0098] }],
  model: 'seed-embedding-vision',
  usage: { prompt_tokens: 6, total_tokens: 6 },
};

export const messagesRequestExample = {
  model: 'claude-sonnet-4-5',
  max_tokens: 200,
  system: 'Answer in one sentence.',
  messages: [{ role: 'user', content: 'Why is the sky blue?' }],
};

export const messageExample = {
  id: 'msg_gen_1b7e3c9a5d2f4e6a8c0b2d4f6a8c0e2b',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Sunlight scatters off air molecules, and blue light scatters the most.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 21, output_tokens: 15 },
};
