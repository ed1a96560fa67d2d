import Type from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cellName,
  clients,
  expectationOf,
  featureUpstreams,
  knownGaps,
  upstreams,
  type ClientName,
  type Feature,
  type Upstream,
} from '../clients/matrix-cells.ts';
import { pngBase64 } from './media-fixtures.ts';
import { modelYaml, startFamilyGateway, type FamilyGateway } from './test-gateway.ts';

/** What every text cell asks; the fakes and the sandbox echo it, and it names the tool, which the sandbox then calls. */
export const prompt = 'lookup weather in Paris';
/** The result the client's tool returns in the multi-step cells; the final answer echoes it. */
export const toolResult = 'sunny';
/**
 * The two calls of the parallel-tools cells' assistant turn and their results; the fakes' answer echoes the last,
 * the sandbox's quotes both.
 */
export const parallelCalls = [
  { id: 'call_paris', query: 'Paris', result: 'sunny' },
  { id: 'call_rome', query: 'Rome', result: 'rainy' },
] as const;
/** The output limit of clients that must send one (the beta surface's max_tokens). */
export const maxTokens = 256;
export const imagePrompt = 'describe this image';
export const imageBase64 = pngBase64;
export const embeddingTexts = ['first text', 'second text'];
/** The schema of the structured-output cells: the fakes answer `{"query": <the prompt>}`, as their tool calls do. */
export const answerJsonSchema = {
  type: 'object' as const,
  properties: { query: { type: 'string' as const } },
  required: ['query'],
  additionalProperties: false,
};
/** The tool every tool cell offers: the fakes call it with `{"query": <the prompt>}`. */
export const lookupTool = {
  name: 'lookup',
  description: 'Looks up the weather of a place',
  parameters: answerJsonSchema,
} as const;

export interface Call {
  model: string;
  key: string;
}

/** One client driven through each feature; every function throws what the client throws. */
export interface ClientDriver {
  generate(call: Call): Promise<string>;
  stream(call: Call): Promise<string>;
  /** Runs the tool loop with the client's own means; the final answer's text. */
  toolsMultiStep(call: Call): Promise<string>;
  /** Sends a history whose assistant turn holds both `parallelCalls` and its results; the answer's text. */
  toolsParallel(call: Call): Promise<string>;
  structured(call: Call): Promise<unknown>;
  structuredStream(call: Call): Promise<unknown>;
  imageInput(call: Call): Promise<string>;
  embed?(call: Call): Promise<number[][]>;
  /** The HTTP status and message the client's error carries. */
  errorOf(error: unknown): { status: number | undefined; message: string };
}

/** The models every text cell asks, each taking text and images. */
export const textModels: Record<Upstream, string> = {
  openai: 'matrix-openai',
  anthropic: 'matrix-anthropic',
  gemini: 'matrix-gemini',
  sandbox: 'sandbox-echo',
};
/** The family gateway's models, which take no image input: an image sent to one is the 400 cells' refusal. */
const textOnlyModels: Record<Upstream, string> = {
  openai: 'via-openai',
  anthropic: 'via-anthropic',
  gemini: 'via-gemini',
  sandbox: 'via-sandbox',
};
const cutModels: Partial<Record<Upstream, string>> = {
  openai: 'cut-openai',
  anthropic: 'cut-anthropic',
  gemini: 'cut-gemini',
};
const embeddingModels: Partial<Record<Upstream, string>> = {
  openai: 'embed-openai',
  gemini: 'embed-gemini',
  sandbox: 'sandbox-embedding',
};

const textModel = (id: string, provider: string, upstream: string) =>
  `${modelYaml(id, { provider, upstream })}    inputModalities: [text, image]`;
const embeddingModel = (id: string, provider: string, upstream: string) =>
  `  - id: ${id}\n    outputModalities: [embedding]\n    pricing: { inputPerMTok: 0.01 }\n    providers: [{ provider: ${provider}, model: ${upstream} }]`;

export interface MatrixGateway {
  gateway: FamilyGateway;
  /** http://127.0.0.1:<port> */
  address: string;
  /** The base URL a client is given: the address and the client's base path. */
  baseUrl(client: ClientName): string;
  keys: { funded: string; broke: string; capped: string; bad: string };
}

/** The gateway in front of one fake of each upstream protocol and the sandbox, listening on loopback. */
async function startMatrixGateway(): Promise<MatrixGateway> {
  const gateway = await startFamilyGateway([
    textModel('matrix-openai', 'openai', 'gpt-4o-mini'),
    textModel('matrix-anthropic', 'anthropic', 'claude-sonnet-4-5-20250929'),
    textModel('matrix-gemini', 'gemini', 'gemini-2.5-flash'),
    textModel('sandbox-echo', 'sandbox', 'echo'),
    modelYaml('cut-openai', { provider: 'openai', upstream: 'fake-cut' }),
    modelYaml('cut-anthropic', { provider: 'anthropic', upstream: 'fake-cut' }),
    modelYaml('cut-gemini', { provider: 'gemini', upstream: 'fake-cut' }),
    embeddingModel('embed-openai', 'openai', 'text-embedding-3-small'),
    embeddingModel('embed-gemini', 'gemini', 'gemini-embedding-001'),
    embeddingModel('sandbox-embedding', 'sandbox', 'embedding'),
  ]);
  const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const [funded, broke, capped] = await Promise.all([
    gateway.createFundedKey({ credits: 10 }),
    gateway.createFundedKey({ credits: 0 }),
    gateway.createFundedKey({ credits: 10, limits: { daily: 0.000001 } }),
  ]);
  return {
    gateway,
    address,
    baseUrl: (client) => `${address}${clients[client].basePath}`,
    keys: { funded: funded.key, broke: broke.key, capped: capped.key, bad: 'gwk_not-a-real-key' },
  };
}

const ErrorBody = Type.Object({ error: Type.Object({ message: Type.String() }) });

/** The status and message the gateway itself answers a generation with, on the client's surface. */
async function gatewayRefusal(
  matrix: MatrixGateway,
  surface: 'alpha' | 'beta' | 'gamma',
  call: Call & { withImage: boolean },
): Promise<{ status: number; message: string }> {
  const { model, key, withImage } = call;
  const image = {
    alpha: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${imageBase64}` } }],
    beta: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: imageBase64 } }],
    gamma: [{ inlineData: { mimeType: 'image/png', data: imageBase64 } }],
  };
  const content = (surface: 'alpha' | 'beta') => [{ type: 'text', text: prompt }, ...(withImage ? image[surface] : [])];
  const requests = {
    alpha: {
      url: '/api/alpha/v1/chat/completions',
      payload: { model, messages: [{ role: 'user', content: content('alpha') }] },
    },
    beta: {
      url: '/api/beta/v1/messages',
      payload: { model, max_tokens: maxTokens, messages: [{ role: 'user', content: content('beta') }] },
    },
    gamma: {
      url: `/api/gamma/v1beta/models/${model}:generateContent`,
      payload: { contents: [{ role: 'user', parts: [{ text: prompt }, ...(withImage ? image.gamma : [])] }] },
    },
  };
  const { url, payload } = requests[surface];
  const response = await matrix.gateway.request({
    method: 'POST',
    url,
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    payload,
  });
  const body: unknown = response.json();
  if (!Value.Check(ErrorBody, body)) throw new Error(`the gateway answered ${response.statusCode}: ${response.body}`);
  return { status: response.statusCode, message: body.error.message };
}

/**
 * How long a cell may take. Each takes well under a second; a client that retries what it should not (a
 * parse failure, a refusal) would otherwise hold the file for minutes, so such a cell fails with this said.
 */
const cellDeadlineMs = 10_000;

function withinDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no outcome after ${cellDeadlineMs / 1000} s: the client kept retrying`)),
      cellDeadlineMs,
    );
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

type Outcome = { result: 'pass' | 'refused' | 'FAIL'; detail?: string };

const short = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}...` : text);

/** Checks one cell: the feature's call and what it must give (or, for a refusal, the 400 and its parameter). */
async function runCell(
  matrix: MatrixGateway,
  {
    client,
    driver,
    feature,
    upstream,
  }: { client: ClientName; driver: ClientDriver; feature: Feature; upstream: Upstream },
): Promise<'pass' | 'refused'> {
  const { keys } = matrix;
  const surface = clients[client].surface;
  const expectation = expectationOf(client, feature, upstream);
  const call = { model: textModels[upstream], key: keys.funded };
  const act = async (): Promise<void> => {
    switch (feature) {
      case 'generate':
        return void expect(await driver.generate(call)).toContain(prompt);
      case 'stream':
        return void expect(await driver.stream(call)).toContain(prompt);
      case 'tools-multi-step':
        return void expect(await driver.toolsMultiStep(call)).toContain(toolResult);
      case 'tools-parallel': {
        const answer = await driver.toolsParallel(call);
        for (const { result } of upstream === 'sandbox' ? parallelCalls : parallelCalls.slice(1))
          expect(answer).toContain(result);
        return;
      }
      case 'structured':
        return void expect(await driver.structured(call)).toEqual({ query: expect.any(String) });
      case 'structured-stream':
        return void expect(await driver.structuredStream(call)).toEqual({ query: expect.any(String) });
      case 'image-input':
        return void expect(await driver.imageInput(call)).toContain(imagePrompt);
      case 'embeddings': {
        if (!driver.embed) throw new Error(`${client} has no embeddings driver`);
        const vectors = await driver.embed({ model: embeddingModels[upstream]!, key: keys.funded });
        expect(vectors).toHaveLength(embeddingTexts.length);
        for (const vector of vectors) expect(vector.length).toBeGreaterThan(0);
        return;
      }
      case 'stream-cut': {
        const streamed = await driver.stream({ model: cutModels[upstream]!, key: keys.funded }).then(
          (text) => ({ text }),
          (error: unknown) => ({ error }),
        );
        if ('text' in streamed) throw new Error(`a cut stream ended as a success with the text "${streamed.text}"`);
        // A refusal is not the cut being seen: the stream must have begun.
        const { status, message } = driver.errorOf(streamed.error);
        if (status !== undefined && status < 500) throw new Error(`refused instead of streamed: ${message}`);
        return;
      }
      case 'error-401':
      case 'error-403':
      case 'error-429':
      case 'error-400': {
        const key = {
          'error-401': keys.bad,
          'error-403': keys.broke,
          'error-429': keys.capped,
          'error-400': keys.funded,
        }[feature];
        // The 400: an image sent to a model that takes none.
        const withImage = feature === 'error-400';
        const erring = { key, model: withImage ? textOnlyModels[upstream] : call.model };
        const refusal = await gatewayRefusal(matrix, surface, { ...erring, withImage });
        expect(refusal.status).toBe(Number(feature.slice('error-'.length)));
        const caught = await (withImage ? driver.imageInput(erring) : driver.generate(erring)).then(
          (text) => new Error(`the call succeeded with "${text}"`),
          (error: unknown) => error,
        );
        const { status, message } = driver.errorOf(caught);
        // Clients that show the error body as JSON carry the message escaped; amounts differ with the
        // client's own output limit, so numbers are compared as numbers, not digits.
        const numbersMasked = (text: string) => text.replace(/\d+(\.\d+)?/g, '#');
        const carried = [refusal.message, JSON.stringify(refusal.message).slice(1, -1)].map(numbersMasked);
        const carriesGatewayMessage = carried.some((text) => numbersMasked(message).includes(text));
        if (status !== refusal.status || !carriesGatewayMessage)
          throw new Error(
            `the gateway said ${refusal.status} "${refusal.message}"; the client: ${status} "${message}"`,
          );
        return;
      }
    }
  };
  if (expectation === 'pass') {
    await act();
    return 'pass';
  }
  const parameter = expectation.slice('refused-400:'.length);
  const caught = await act().then(
    () => new Error('the call succeeded'),
    (error: unknown) => error,
  );
  const { status, message } = driver.errorOf(caught);
  if (status !== 400 || !message.includes(parameter))
    throw new Error(`expected a 400 naming ${parameter}; the client: ${status} "${message}"`);
  return 'refused';
}

/** The matrix as text: one row per client and feature, one column per upstream. */
function renderMatrix(family: string, outcomes: Map<string, Outcome>, names: readonly ClientName[]): string {
  const width = 12;
  const lines = [
    `Client matrix: ${family}`,
    `${'client · feature'.padEnd(48)}${upstreams.map((u) => u.padEnd(width)).join('')}`,
  ];
  const details: string[] = [];
  for (const client of names) {
    for (const feature of clients[client].features) {
      const row = upstreams.map((upstream) => {
        const name = cellName(client, feature, upstream);
        const outcome = outcomes.get(name);
        if (!featureUpstreams[feature].includes(upstream)) return '-'.padEnd(width);
        if (outcome === undefined) return 'not run'.padEnd(width);
        const gap = knownGaps[name] !== undefined;
        if (outcome.detail) details.push(`${name}${gap ? ' (known gap)' : ''}: ${outcome.detail}`);
        const mark = outcome.result === 'FAIL' && gap ? 'FAIL(gap)' : outcome.result;
        return (gap && outcome.result !== 'FAIL' ? `${mark}!gap` : mark).padEnd(width);
      });
      lines.push(`${`${client} · ${feature}`.padEnd(48)}${row.join('')}`);
    }
  }
  return [...lines, '', ...details].join('\n');
}

/**
 * Runs the cells of the named clients against one gateway, booted once for the file: one vitest test per
 * cell. A cell that misses its expectation fails unless it is a known gap; the matrix is printed at the end
 * (`!gap` marks a known gap that passed: its entry can go).
 */
export function describeClientMatrix(
  family: string,
  drivers: Partial<Record<ClientName, (matrix: MatrixGateway) => ClientDriver>>,
): void {
  const outcomes = new Map<string, Outcome>();
  let matrix: MatrixGateway;
  const built = new Map<ClientName, ClientDriver>();
  const names = Object.keys(drivers).filter((name): name is ClientName => name in clients);
  describe(`client matrix: ${family}`, () => {
    beforeAll(async () => {
      matrix = await startMatrixGateway();
      for (const name of names) built.set(name, drivers[name]!(matrix));
    });
    afterAll(async () => {
      console.log(renderMatrix(family, outcomes, names));
      await matrix?.gateway.close();
    });
    for (const client of names) {
      for (const feature of clients[client].features) {
        for (const upstream of featureUpstreams[feature]) {
          const name = cellName(client, feature, upstream);
          it(name, async () => {
            const driver = built.get(client)!;
            try {
              const result = await withinDeadline(runCell(matrix, { client, driver, feature, upstream }));
              outcomes.set(name, { result });
            } catch (error) {
              outcomes.set(name, {
                result: 'FAIL',
                detail: short(error instanceof Error ? error.message : String(error)),
              });
              if (knownGaps[name] === undefined) throw error;
            }
          });
        }
      }
    }
  });
}
