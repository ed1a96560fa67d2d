/**
 * Examples of the alpha surface's bodies and answers, in the shapes OpenAI's clients send and read, as the
 * OpenAPI document shows them (the OpenAPI lint checks each against its schema).
 */

export const modelListExample = {
  object: 'list',
  data: [
    {
      id: 'gpt-4o-mini',
      object: 'model',
      created: 1767225600,
      owned_by: 'gateway',
      name: 'GPT-4o mini',
      inputModalities: ['text', 'image'],
      outputModalities: ['text'],
    },
  ],
};

export const modelExample = modelListExample.data[0];

export const chatRequestExample = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'Why is the sky blue?' },
  ],
  max_tokens: 200,
};

export const chatCompletionExample = {
  id: 'chatcmpl-gen_1b7e3c9a5d2f4e6a8c0b2d4f6a8c0e2b',
  object: 'chat.completion',
  created: 1772445871,
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Sunlight scatters off air molecules, and blue light scatters the most.',
      },
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 24, completion_tokens: 13, total_tokens: 37 },
};

export const embeddingsRequestExample = {
  model: 'text-embedding-3-small',
  input: ['The tide comes in at dusk.'],
  dimensions: 4,
  encoding_format: 'float',
};

export const embeddingsListExample = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789, -0.0012] }],
  model: 'text-embedding-3-small',
  usage: { prompt_tokens: 7, total_tokens: 7 },
};

export const imagesRequestExample = {
  model: 'gpt-image-1',
  prompt: 'A lighthouse at dawn, watercolour',
  size: '1024x1024',
  quality: 'medium',
};

export const imagesAnswerExample = {
  created: 1772450405,
  data: [
    { b64_json: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==' },
  ],
  quality: 'medium',
  size: '1024x1024',
  output_format: 'png',
  usage: { input_tokens: 12, output_tokens: 1056, total_tokens: 1068 },
};

export const responsesRequestExample = {
  model: 'gpt-4o-mini',
  instructions: 'Answer in one sentence.',
  input: 'Why is the sky blue?',
  max_output_tokens: 200,
};

export const responseObjectExample = {
  id: 'resp_gen_1b7e3c9a5d2f4e6a8c0b2d4f6a8c0e2b',
  object: 'response',
  created_at: 1772445871,
  status: 'completed',
  model: 'gpt-4o-mini',
  output: [
    {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'output_text', text: 'Sunlight scatters off air molecules, and blue light scatters the most.' },
      ],
    },
  ],
  usage: { input_tokens: 24, output_tokens: 13, total_tokens: 37 },
};

export const videoRequestExample = {
  model: 'sora-2-pro',
  prompt: 'A paper boat drifting down a rainy street',
  seconds: 8,
  size: '1280x720',
};

const videoId = 'gen_5e7a9c1b3d5f7a9c1e3b5d7f9a1c3e5b';

export const videoJobExample = {
  id: videoId,
  polling_url: `https://gateway.example.com/api/alpha/v1/videos/${videoId}`,
  status: 'pending',
  generation_id: videoId,
  model: 'sora-2-pro',
};
