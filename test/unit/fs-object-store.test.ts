import { createSecretKey } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MediaDownloads } from '../../src/gateway/media-downloads.ts';
import { FsObjectStore } from '../../src/storage/fs-object-store.ts';

const linkKey = createSecretKey(Buffer.alloc(32, 7));

async function text(stream: Readable | undefined): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream ?? []) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function query(link: string): { key: string; expires: string; signature: string } {
  const url = new URL(link, 'http://gateway');
  return {
    key: decodeURIComponent(url.pathname.replace('/api/v1/media/files/', '')),
    expires: url.searchParams.get('expires')!,
    signature: url.searchParams.get('signature')!,
  };
}

describe('the filesystem object store and its signed links', () => {
  let root: string;
  let store: FsObjectStore;
  let downloads: MediaDownloads;

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'gw-fs-store-'));
    store = new FsObjectStore(root, linkKey);
    downloads = new MediaDownloads(store, linkKey);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes, overwrites, reads and deletes, leaving no temporary file behind', async () => {
    await store.put('images/job/0.png', Buffer.from('one'), 'image/png');
    await store.put('images/job/0.png', Buffer.from('two'), 'image/jpeg');
    expect(await store.get('images/job/0.png')).toEqual({ bytes: Buffer.from('two'), contentType: 'image/jpeg' });
    expect(readdirSync(path.join(root, 'images', 'job')).sort()).toEqual(['0.png', '0.png.type']);
    await store.delete('images/job/0.png');
    await store.delete('images/job/0.png');
    expect(await store.get('images/job/0.png')).toBeUndefined();
    await store.check();
  });

  it("deletes a folder's objects, and those of no other folder", async () => {
    await store.put('images/gen_a/0.png', Buffer.from('a0'), 'image/png');
    await store.put('images/gen_a/1.jpg', Buffer.from('a1'), 'image/jpeg');
    await store.put('images/gen_ab/0.png', Buffer.from('ab'), 'image/png');
    await store.deleteFolder('images/gen_a/');
    expect(await store.get('images/gen_a/0.png')).toBeUndefined();
    expect(await store.get('images/gen_a/1.jpg')).toBeUndefined();
    expect(readdirSync(path.join(root, 'images'))).toEqual(['gen_ab']);
    expect(await store.get('images/gen_ab/0.png')).toEqual({ bytes: Buffer.from('ab'), contentType: 'image/png' });
    // A folder holding nothing is no error; one that is not a folder of keys is refused.
    await store.deleteFolder('images/gen_a/');
    for (const folder of ['images/gen_ab', '../', 'images/../', '/', '']) {
      await expect(store.deleteFolder(folder)).rejects.toThrow(/invalid object (key|folder)/);
    }
    expect(await store.get('images/gen_ab/0.png')).toBeDefined();
  });

  it('refuses keys that could leave its directory', async () => {
    for (const key of ['../x', 'a/../../x', '/abs', 'A/upper', 'a//b', '.hidden', 'a/./b']) {
      await expect(store.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid object key/);
    }
  });

  it('serves a signed link whole, by range, and for HEAD; refuses tampered and expired ones', async () => {
    await store.put('media/clip.bin', Buffer.from('0123456789'), 'video/mp4');
    const link = query(await store.signedLink('media/clip.bin', new Date(Date.now() + 60_000)));
    const whole = await downloads.open(link.key, link, { head: false });
    expect(whole.status).toBe(200);
    expect(whole.headers).toMatchObject({
      'content-type': 'video/mp4',
      'content-length': '10',
      'accept-ranges': 'bytes',
    });
    expect(whole.headers['cache-control']).toMatch(/^private, max-age=(59|60)$/);
    expect(await text(whole.body)).toBe('0123456789');
    const middle = await downloads.open(link.key, link, { range: 'bytes=2-4', head: false });
    expect(middle).toMatchObject({ status: 206, headers: { 'content-range': 'bytes 2-4/10', 'content-length': '3' } });
    expect(await text(middle.body)).toBe('234');
    expect(await text((await downloads.open(link.key, link, { range: 'bytes=7-', head: false })).body)).toBe('789');
    expect(await text((await downloads.open(link.key, link, { range: 'bytes=-2', head: false })).body)).toBe('89');
    await expect(downloads.open(link.key, link, { range: 'bytes=10-', head: false })).rejects.toMatchObject({
      status: 416,
    });
    const head = await downloads.open(link.key, link, { head: true });
    expect(head.body).toBeUndefined();
    expect(head.headers['content-length']).toBe('10');

    await expect(downloads.open('media/other.bin', link, { head: false })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/not valid/),
    });
    await expect(
      downloads.open(link.key, { ...link, expires: String(Number(link.expires) + 1) }, { head: false }),
    ).rejects.toMatchObject({ status: 403 });
    await expect(downloads.open(link.key, { ...link, signature: undefined }, { head: false })).rejects.toMatchObject({
      status: 403,
    });
    const expired = query(await store.signedLink('media/clip.bin', new Date(Date.now() - 1000)));
    await expect(downloads.open(expired.key, expired, { head: false })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/expired/),
    });
    await store.delete('media/clip.bin');
    await expect(downloads.open(link.key, link, { head: false })).rejects.toMatchObject({ status: 404 });
  });

  it('answers 404 for a file deleted (its retention ended) between reading its size and opening it', async () => {
    await store.put('media/clip.bin', Buffer.from('0123456789'), 'video/mp4');
    // The retention sweep deletes the file after the download has read its size.
    class SweptMidway extends FsObjectStore {
      override async open(key: string, range?: { start: number; end: number }) {
        await this.delete(key);
        return super.open(key, range);
      }
    }
    const swept = new MediaDownloads(new SweptMidway(root, linkKey), linkKey);
    await expect(swept.serve('media/clip.bin', { head: false, maxAgeSeconds: 0 })).rejects.toMatchObject({
      status: 404,
      code: 'GW_NOT_FOUND',
    });
  });

  it('serves the whole file when the sweep deletes it once the download has opened it', async () => {
    await store.put('media/clip.bin', Buffer.from('0123456789'), 'video/mp4');
    // Deleted as soon as the store answered, before the stream's first turn: the bytes promised still come.
    class SweptOnceOpened extends FsObjectStore {
      override async open(key: string, range?: { start: number; end: number }) {
        const opened = await super.open(key, range);
        rmSync(path.join(root, key));
        return opened;
      }
    }
    const swept = new MediaDownloads(new SweptOnceOpened(root, linkKey), linkKey);
    const served = await swept.serve('media/clip.bin', { head: false, maxAgeSeconds: 0 });
    expect(served.headers['content-length']).toBe('10');
    expect(await text(served.body)).toBe('0123456789');
  });
});
