/**
 * A catalog of every kind of model the native catalog routes show (text, vision with a slash in its id and
 * rows of several priorities, omni, embeddings, images), one served only by a provider without a key, and one
 * switched off. Providers `keyed` and `unkeyed` take their keys from the environment
 * (`CATALOG_TEST_KEYED_KEY`, `CATALOG_TEST_UNKEYED_KEY`); the tests activate only `keyed`. `sandbox` is always active.
 */
export const nativeCatalogYaml = `
providers:
  keyed:
    protocol: openai
    baseUrl: https://keyed.example.com/v1
    apiKey: \${CATALOG_TEST_KEYED_KEY}
  unkeyed:
    protocol: anthropic
    baseUrl: https://unkeyed.example.com/v1
    apiKey: \${CATALOG_TEST_UNKEYED_KEY}
  sandbox:
    protocol: sandbox
models:
  - id: plain-text
    name: Plain text
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: sandbox, model: echo }
  - id: vendor/vision-1.5
    name: Vision with a slash and a dot
    revision: 3
    inputModalities: [text, image]
    outputModalities: [text]
    providers:
      - provider: unkeyed
        model: loser-inactive
        priority: 0
        capabilities:
          text: { supportedParameters: [maxTokens] }
          strictParams: true
      - provider: sandbox
        model: echo
        priority: 5
        capabilities:
          text: { supportedParameters: [temperature] }
      - provider: keyed
        model: winner
        priority: 2
        capabilities:
          text: { supportedParameters: [maxTokens, temperature, topP] }
          params:
            temperature: { type: range, min: 0, max: 1.5 }
          inputs: { image: { maxCount: 4 } }
  - id: omni
    inputModalities: [text, image, file, video, audio]
    outputModalities: [text, audio]
    providers:
      - { provider: keyed, model: omni-upstream }
  - id: embedder
    name: Embedder
    inputModalities: [text]
    outputModalities: [embedding]
    providers:
      - provider: sandbox
        model: embedding
        capabilities:
          params:
            dimensions: { type: int, min: 1, max: 64 }
  - id: painter
    name: Painter
    inputModalities: [text, image]
    outputModalities: [image]
    providers:
      - provider: sandbox
        model: image
        capabilities:
          image:
            params:
              size: { type: enum, values: [small, large], default: small }
  - id: only-unkeyed
    name: Served only by the provider without a key
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: unkeyed, model: nope }
  - id: switched-off
    name: Switched off in the configuration
    isActive: false
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: sandbox, model: echo }
`;
