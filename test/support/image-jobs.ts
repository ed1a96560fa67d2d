import { eq } from 'drizzle-orm';
import { accounts, mediaJobs } from '../../src/storage/schema.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { pollUntil } from './http-helpers.ts';
import { fakeProviderYaml, sandboxConfigYaml, startTestGateway, type TestGateway } from './test-gateway.ts';

/** The sandbox's image models beside its text ones, then `extra` catalog entries and sections. */
export function sandboxImageConfigYaml(extra = ''): string {
  return sandboxConfigYaml(
    [
      '  - id: sandbox-image',
      '    outputModalities: [image]',
      '    pricing: { perImage: 0.001 }',
      '    providers: [{ provider: sandbox, model: image, capabilities: { image: { params: { guidanceScale: { type: range, min: 1, max: 10 } } } } }]',
      '  - id: sandbox-image-layers',
      '    outputModalities: [image]',
      '    pricing: { perImage: 0.002 }',
      '    providers: [{ provider: sandbox, model: image-layers, capabilities: { image: { params: { layerDecomposition: { type: bool } } } } }]',
      extra,
    ].join('\n'),
  );
}

export interface ImageJobBody {
  generationId: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  error?: string;
  result?: {
    images: Array<{
      url?: string;
      downloadUrl: string;
      assetId: string;
      zIndex?: number;
      boundingBox?: { absolute: number[]; normalized: number[] };
      name?: string;
      description?: string;
    }>;
    usage: Record<string, number>;
  };
}

/** Polls an image job until it is terminal (or `timeoutMs` passes) and answers it. */
export function waitForImageJob(
  gateway: TestGateway,
  { key, generationId, timeoutMs = 20_000 }: { key: string; generationId: string; timeoutMs?: number },
): Promise<ImageJobBody> {
  return pollUntil<ImageJobBody>(
    gateway,
    { url: `/api/v1/image/generations/async/${generationId}`, key, timeoutMs, intervalMs: 50 },
    (job) => job.status === 'succeeded' || job.status === 'failed',
  );
}

export async function balanceNanosOf(gateway: TestGateway, accountId: string): Promise<bigint> {
  const [row] = await gateway.gateway.core.storage.db
    .select({ balance: accounts.balanceNanos })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return row?.balance ?? -1n;
}

export async function jobRowsOf(
  gateway: TestGateway,
  accountId: string,
): Promise<Array<typeof mediaJobs.$inferSelect>> {
  return gateway.gateway.core.storage.db.select().from(mediaJobs).where(eq(mediaJobs.accountId, accountId));
}

/** A one-pixel PNG, as base64: a reference image every family accepts. */
export const tinyPngBase64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface ImageFamilyGateway extends TestGateway {
  openai: FakeServer;
  ark: FakeServer;
}

/** A gateway in front of an OpenAI fake (`openai`), a ModelArk fake (`ark`) and the sandbox, serving the catalog lines `models` (then `extra` sections). */
export async function startImageFamilyGateway(
  models: readonly string[],
  extra: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<ImageFamilyGateway> {
  const [openai, ark] = await Promise.all([startOpenAiFake(), startArkFake()]);
  const gateway = await startTestGateway({
    upstreams: [openai, ark],
    env,
    configText: [
      'providers:',
      fakeProviderYaml('openai', 'openai', openai),
      fakeProviderYaml('ark', 'ark', ark),
      '  sandbox: { protocol: sandbox }',
      ...extra,
      'models:',
      ...models,
    ].join('\n'),
  });
  return { ...gateway, openai, ark };
}
