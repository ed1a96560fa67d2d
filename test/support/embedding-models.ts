/**
 * Embedding models of every kind the gateway serves, each on the family it is usually served by: text on
 * OpenAI with bounded dimensions, Gemini's text-only and multimodal models (every part type listed), and a
 * vision model on BytePlus ModelArk. Catalog entries for a configuration's `models:`, with providers named
 * `openai`, `gemini` and `ark`.
 */
export const embeddingModelsYaml = `
  - id: text-embed
    inputModalities: [text]
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers:
      - provider: openai
        model: text-embedding-3-small
        capabilities: { params: { dimensions: { type: int, min: 1, max: 1536 } } }
  - id: gemini-embed-1
    inputModalities: [text]
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers: [{ provider: gemini, model: gemini-embedding-001 }]
  - id: gemini-embed-2
    inputModalities: [text, image, audio, video, file]
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1, inputPerImage: 0.0001, inputPerAudioSecond: 0.00001, inputPerVideoSecond: 0.00002, inputPerFile: 0.001 }
    providers:
      - provider: gemini
        model: gemini-embedding-2-preview
        capabilities:
          inputs: { parts: [text, imageBase64, imageUrl, audioBase64, audioUrl, fileBase64, videoBase64] }
          params: { dimensions: { type: int, min: 128, max: 3072 } }
  - id: vision-embed
    inputModalities: [text, image]
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers: [{ provider: ark, model: doubao-embedding-vision-250615 }]
`;

/** An embeddings request as [route, body], on the beta extension (one input of `content` parts). */
export const betaEmbedding = (model: string, ...content: object[]) =>
  ['/api/beta/v1/embeddings', { model, input: [{ content }] }] as const;

/** An embeddings request as [route, body], on the alpha surface (to text-embed, as floats, unless `payload` says). */
export const alphaEmbedding = (payload: object) =>
  ['/api/alpha/v1/embeddings', { model: 'text-embed', encoding_format: 'float', ...payload }] as const;

/** An embeddings request as [route, body], on the gamma surface: `action` is embedContent or batchEmbedContents. */
export const gammaEmbedding = (model: string, action: string, payload: object) =>
  [`/api/gamma/v1beta/models/${model}:${action}`, payload] as const;
