/**
 * A job whose process died (SIGKILL) after storing outputs, and that the process taking it over then fails, keeps
 * nothing in the object store: no asset row names what a failed job stored, so no retention sweep would ever delete
 * it. Each job here is left as a killed process leaves it (its claim run out, its phase and stored answer as written
 * before the kill, its outputs in the store, some named by its row and some by nothing yet), then taken over: past
 * its deadline (failed without running), with its stored answer unreadable (failed without running), or failed by its
 * runner (a call under way at the kill is not sent again; a task the provider no longer knows). Each ends failed,
 * charged nothing, its hold given back, and none of its outputs is left.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { encodePng } from '../../src/providers/sandbox/png.ts';
import { generations, mediaJobs } from '../../src/storage/schema.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startSpeechFake } from '../fakes/speech-fake.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { mediaJobCatalog } from '../support/media-job-catalog.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const credits = 5;
const text = (value: string) => ({ type: 'text', text: value });
const png = encodePng(2, 2, () => [200, 100, 50, 255]);

type Kind = 'image' | 'video' | 'audio';

/** What a killed process left of a job: its row's run columns, and the outputs it had stored (by file name). */
interface LeftBehind {
  kind: Kind;
  /** The job's deadline had passed when it was taken over. */
  pastDeadline: boolean;
  phase: 'sent' | 'task' | 'generated';
  upstreamTaskId?: string;
  /** The provider's answer as recorded, given the job's folder (`images/gen_x/`); a string is stored as is, unreadable. */
  upstreamResult?: (folder: string) => unknown;
  outputs: Record<string, { bytes: Buffer; mediaType: string }>;
  error: RegExp;
}

const submissions: Record<Kind, { url: string; body: Record<string, unknown> }> = {
  image: { url: '/api/v1/image/generations/async', body: { model: 'seedream', content: [text('a lighthouse')] } },
  video: { url: '/api/v1/video/generations', body: { model: 'seedance', content: [text('waves')], duration: 2 } },
  audio: {
    url: '/api/v1/audio/text-to-speech',
    body: { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hello there' },
  },
};
const folders: Record<Kind, string> = { image: 'images', video: 'videos', audio: 'audio' };
const pastDeadline = /^the job did not finish within \d+ seconds$/;

const cases: Record<string, LeftBehind> = {
  'an image job past its deadline, killed while archiving (an inline output named, a downloaded one not yet)': {
    kind: 'image',
    pastDeadline: true,
    phase: 'generated',
    upstreamResult: (folder) => ({
      images: [
        { output: { kind: 'stored', objectKey: `${folder}0.png`, mediaType: 'image/png' } },
        { output: { kind: 'url', url: 'https://images.example.com/1.png' } },
      ],
      failures: [],
      usage: { generatedImages: 2 },
    }),
    outputs: { '0.png': { bytes: png, mediaType: 'image/png' }, '1.png': { bytes: png, mediaType: 'image/png' } },
    error: pastDeadline,
  },
  'a video job past its deadline, killed once its video was archived and before it was recorded': {
    kind: 'video',
    pastDeadline: true,
    phase: 'task',
    upstreamTaskId: 'cgt-of-a-killed-process',
    outputs: { 'video.mp4': { bytes: Buffer.from('not really an mp4'), mediaType: 'video/mp4' } },
    error: pastDeadline,
  },
  'a text-to-speech job past its deadline, killed once its audio was stored and recorded': {
    kind: 'audio',
    pastDeadline: true,
    phase: 'generated',
    upstreamResult: (folder) => ({
      assetId: 'asset_of_a_killed_process',
      objectKey: `${folder}speech.mp3`,
      mediaType: 'audio/mpeg',
      bytes: 5,
    }),
    outputs: { 'speech.mp3': { bytes: Buffer.from('audio'), mediaType: 'audio/mpeg' } },
    error: pastDeadline,
  },
  'an image job whose recorded answer this release cannot read': {
    kind: 'image',
    pastDeadline: false,
    phase: 'generated',
    upstreamResult: () => ({ data: [{ url: 'https://images.example.com/0.png' }] }),
    outputs: { '0.png': { bytes: png, mediaType: 'image/png' } },
    error: /^the provider's answer stored with this image job is not one this release of the gateway can run /,
  },
  'an image job killed between storing its inline outputs and recording the answer': {
    kind: 'image',
    pastDeadline: false,
    phase: 'sent',
    outputs: { '0.png': { bytes: png, mediaType: 'image/png' }, '1.jpg': { bytes: png, mediaType: 'image/jpeg' } },
    error: /not sent again/,
  },
  'a text-to-speech job killed between storing its audio and recording it': {
    kind: 'audio',
    pastDeadline: false,
    phase: 'sent',
    outputs: { 'speech.mp3': { bytes: Buffer.from('audio'), mediaType: 'audio/mpeg' } },
    error: /not sent again/,
  },
  'a video job killed once its video was archived, whose task the provider no longer knows': {
    kind: 'video',
    pastDeadline: false,
    phase: 'task',
    upstreamTaskId: 'cgt-the-provider-forgot',
    outputs: { 'video.mp4': { bytes: Buffer.from('not really an mp4'), mediaType: 'video/mp4' } },
    error: /not found/,
  },
};

describe('outputs stored by a killed process, of a job the process taking it over fails', () => {
  let gateway: TestGateway;
  let ark: FakeServer;
  let speech: FakeServer;

  beforeAll(async () => {
    [ark, speech] = await Promise.all([startArkFake(), startSpeechFake()]);
    gateway = await startTestGateway({
      upstreams: [ark, speech],
      configText: mediaJobCatalog({ ark, speech, jobs: 'jobs: { idlePollMs: 50, taskPollMs: 20, claimSeconds: 30 }' }),
    });
    // The jobs are queued and then left as a killed process leaves them before this process takes them over.
    await gateway.gateway.core.worker.stop(0);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('fails each job uncharged and deletes every output it had stored', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits });
    const { db } = gateway.gateway.core.storage;
    const { store } = gateway.gateway.core;
    const left: Array<{ name: string; id: string; keys: string[]; error: RegExp }> = [];
    for (const [name, job] of Object.entries(cases)) {
      const submitted = await gateway.request({
        method: 'POST',
        url: submissions[job.kind].url,
        headers: keyHeaders(key),
        payload: submissions[job.kind].body,
      });
      expect(submitted.statusCode, submitted.body).toBeLessThan(300);
      const { generationId: id } = submitted.json<{ generationId: string }>();
      const folder = `${folders[job.kind]}/${id.toLowerCase()}/`;
      await db
        .update(mediaJobs)
        .set({
          state: 'processing',
          phase: job.phase,
          attempts: 1,
          upstreamTaskId: job.upstreamTaskId ?? null,
          upstreamResult: job.upstreamResult?.(folder) ?? null,
          claimedBy: 'a-killed-process',
          claimExpiresAt: sql`now() - interval '1 second'`,
          ...(job.pastDeadline ? { deadlineAt: sql`now() - interval '1 minute'` } : {}),
        })
        .where(eq(mediaJobs.id, id));
      const keys = Object.keys(job.outputs).map((file) => `${folder}${file}`);
      for (const [file, { bytes, mediaType }] of Object.entries(job.outputs))
        await store.put(`${folder}${file}`, bytes, mediaType);
      left.push({ name, id, keys, error: job.error });
    }

    gateway.gateway.core.worker.start();
    await expect
      .poll(
        async () => {
          const rows = await db.select().from(mediaJobs).where(eq(mediaJobs.accountId, accountId));
          return rows.filter((row) => row.state === 'failed').length;
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBe(left.length);
    await gateway.settled();

    for (const { name, id, error } of left) {
      const [row] = await db.select().from(mediaJobs).where(eq(mediaJobs.id, id));
      expect(row, name).toMatchObject({ state: 'failed', claimedBy: null });
      expect(row!.error, name).toMatch(error);
      const [record] = await db.select().from(generations).where(eq(generations.id, id));
      expect(record, name).toMatchObject({ status: 'failed', usdCostNanos: 0n });
    }
    // Deleted once each job is settled (its waiters are told after): what is still in the store a moment later.
    const kept = async () => {
      const found: string[] = [];
      for (const { name, keys } of left)
        for (const objectKey of keys) if (await store.get(objectKey)) found.push(`${name}: ${objectKey}`);
      return found;
    };
    await expect.poll(kept, { timeout: 2000, interval: 50 }).toEqual([]);
    const [books] = await uncheckedRows<{ balance: string; held: string; holds: string; assets: string }>(
      db,
      sql`SELECT (SELECT balance_nanos FROM accounts WHERE id = ${accountId})::text AS balance,
                 (SELECT held_nanos FROM accounts WHERE id = ${accountId})::text AS held,
                 (SELECT count(*) FROM holds WHERE account_id = ${accountId})::text AS holds,
                 (SELECT count(*) FROM media_assets WHERE account_id = ${accountId})::text AS assets`,
    );
    expect(books).toEqual({ balance: String(usdToNanos(credits)), held: '0', holds: '0', assets: '0' });
  });
});
