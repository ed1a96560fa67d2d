import { describe, expect, it } from 'vitest';
import type { ChatRequest, DecodedChat } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';
import { pngBase64 as png } from '../support/media-fixtures.ts';

/** Image inputs cross protocols in the request order: each upstream protocol gets its own wire shape of the same image. */
function requestOf(decoded: DecodedChat, upstreamModel: string): ChatRequest {
  const { untranslatable, ...chat } = decoded;
  expect(untranslatable).toEqual([]);
  return { upstreamModel, ...chat };
}

describe('image inputs through translation', () => {
  const alpha = decodeChatMessages({
    model: 'vision',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.webp' } },
        ],
      },
    ],
  });

  it('alpha image_url parts become Anthropic image blocks, base64 or url', () => {
    expect(encodeMessagesRequest(requestOf(alpha, 'claude-sonnet-4-5-20250929')).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.webp' } },
        ],
      },
    ]);
  });

  it('alpha image_url parts become Gemini inlineData or fileData with the type the URL names', () => {
    expect(encodeGenerateContent(requestOf(alpha, 'gemini-2.5-flash')).contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'what is this' },
          { inlineData: { mimeType: 'image/png', data: png } },
          { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp' } },
        ],
      },
    ]);
  });

  const asOpenAi = [
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'text', text: 'describe' },
      ],
    },
  ];

  it('beta image blocks become OpenAI image_url parts as data URLs', () => {
    const beta = decodeMessages({
      model: 'vision',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            { type: 'text', text: 'describe' },
          ],
        },
      ],
    });
    expect(encodeChatRequest(requestOf(beta, 'gpt-4o')).messages).toEqual(asOpenAi);
  });

  it('gamma inlineData becomes OpenAI image_url parts as data URLs', () => {
    const gamma = decodeContents({
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: png } }, { text: 'describe' }] }],
    });
    expect(encodeChatRequest(requestOf(gamma, 'gpt-4o')).messages).toEqual(asOpenAi);
  });
});
