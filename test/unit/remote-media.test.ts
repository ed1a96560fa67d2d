import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { isNonPublicAddress, RemoteMediaFetcher } from '../../src/media/remote-media.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startMediaHost } from '../support/media-host.ts';

describe('isNonPublicAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd12:3456::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::a00:1', true],
    // IPv4-compatible (deprecated), written both ways
    ['::127.0.0.1', true],
    ['::7f00:1', true],
    ['::8.8.8.8', true],
    // IPv4-mapped, in hex groups
    ['::ffff:7f00:1', true],
    ['::ffff:a9fe:a9fe', true],
    ['::ffff:808:808', false],
    // IPv4-translated (SIIT, ::ffff:0:0:0/96)
    ['::ffff:0:7f00:1', true],
    ['::ffff:0:127.0.0.1', true],
    ['::ffff:0:c0a8:101', true],
    ['::ffff:0:808:808', false],
    // NAT64 (64:ff9b::/96) of private and public IPv4, and the local-use NAT64 prefix
    ['64:ff9b::127.0.0.1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::808:808', false],
    ['64:ff9b:1::808:808', true],
    // 6to4 of private and public IPv4
    ['2002:7f00:1::1', true],
    ['2002:a00:1::', true],
    ['2002:c0a8:101::1', true],
    ['2002:808:808::1', false],
    // Teredo, documentation, discard, unique-local, link-local, site-local, multicast, full and bracketed forms
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true],
    ['2001:db8::1', true],
    ['100::1', true],
    ['fc00::1', true],
    ['fe80::1%eth0', true],
    ['febf::1', true],
    ['fec0::1', true],
    ['ff02::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['0000:0000:0000:0000:0000:0000:0000:0000', true],
    ['[::1]', true],
    ['[::ffff:0:7f00:1]', true],
    ['2606:4700:4700::1111', false],
    ['not an address', true],
  ])('%s -> %s', (address, expected) => {
    expect(isNonPublicAddress(address)).toBe(expected);
  });
});

describe('RemoteMediaFetcher', () => {
  let host: FakeServer;
  const port = () => new URL(host.url).port;
  const providerKey = 'sk-media-9Xq4Lw2Zr7TbKd';
  // A provider's file that quotes its key across the host's 1,024-byte writes.
  const echoing = Buffer.concat([
    Buffer.alloc(1_014, 'a'),
    Buffer.from(`key ${providerKey} key `),
    Buffer.alloc(500, 'b'),
    Buffer.from(providerKey),
  ]);
  const entries: Parameters<typeof startMediaHost>[0] = {
    '/a.png': { contentType: 'image/png; charset=binary', body: Buffer.from('png bytes') },
    '/hop': { redirect: '/hop' },
    '/bad-redirect': { redirect: 'http://[oops/x' },
    '/slow': 'stall',
    '/slow-body': 'stall mid-body',
    '/big': { body: Buffer.alloc(5_000) },
    '/big-chunked': { body: Buffer.alloc(5_000), chunked: true },
    '/echoing.mp4': { body: echoing, chunked: true },
    '/to-echoing': { redirect: '/echoing.mp4' },
  };

  beforeAll(async () => {
    host = await startMediaHost(entries);
    // The same server under another origin: a redirect there leaves the provider's origin.
    entries['/elsewhere'] = { redirect: `http://localhost:${port()}/echoing.mp4` };
  });
  afterAll(async () => {
    await host.close();
  });

  const open = (options: Partial<ConstructorParameters<typeof RemoteMediaFetcher>[0]> = {}) =>
    new RemoteMediaFetcher({ timeoutMs: 2_000, maxBytes: 4_096, allowPrivateAddresses: true, ...options });

  it('returns the bytes and the bare media type', async () => {
    const fetcher = open();
    await expect(fetcher.fetch(`${host.url}/a.png`)).resolves.toEqual({
      contentType: 'image/png',
      bytes: Buffer.from('png bytes'),
    });
    await fetcher.close();
  });

  it('refuses loopback by literal address and by name without sending a request, unless allowed', async () => {
    const fetcher = open({ allowPrivateAddresses: false });
    const before = host.requests.length;
    await expect(fetcher.fetch(`http://127.0.0.1:${port()}/a.png`)).rejects.toThrow(
      '127.0.0.1 is not a public address',
    );
    await expect(fetcher.fetch(`http://[::1]:${port()}/a.png`)).rejects.toThrow('[::1] is not a public address');
    await expect(fetcher.fetch(`http://[::127.0.0.1]:${port()}/a.png`)).rejects.toThrow(
      '[::7f00:1] is not a public address',
    );
    await expect(fetcher.fetch(`http://[::ffff:0:7f00:1]:${port()}/a.png`)).rejects.toThrow(
      '[::ffff:0:7f00:1] is not a public address',
    );
    await expect(fetcher.fetch(`http://[::ffff:127.0.0.1]:${port()}/a.png`)).rejects.toThrow('is not a public address');
    await expect(fetcher.fetch(`http://[64:ff9b::127.0.0.1]:${port()}/a.png`)).rejects.toThrow(
      'is not a public address',
    );
    await expect(fetcher.fetch(`http://[2002:7f00:1::1]:${port()}/a.png`)).rejects.toThrow('is not a public address');
    await expect(fetcher.fetch(`http://localhost:${port()}/a.png`)).rejects.toThrow(
      'localhost resolves to a non-public address',
    );
    expect(host.requests.length).toBe(before);
    await fetcher.close();
  });

  it("sends a provider's credentials to its own origin only, and refuses a file that quotes them", async () => {
    const fetcher = open();
    const credentials = { authorization: new Secret(`Bearer ${providerKey}`), 'x-org': new Secret('org-7731-5520') };
    const before = host.requests.length;
    const quoting = `${new URL(host.url).host} answered with a file that quotes the credentials it was fetched with`;

    await expect(fetcher.fetch(`${host.url}/echoing.mp4`, { credentials })).rejects.toThrow(quoting);
    await expect(fetcher.fetch(`${host.url}/to-echoing`, { credentials })).rejects.toThrow(quoting);
    // Followed to another origin, the credentials stay behind; the file is still searched for them.
    await expect(fetcher.fetch(`${host.url}/elsewhere`, { credentials })).rejects.toThrow(
      `localhost:${port()} answered with a file that quotes the credentials it was fetched with`,
    );
    // Without credentials there is nothing to look for: the bytes are the file's own.
    expect((await fetcher.fetch(`${host.url}/echoing.mp4`)).bytes.equals(echoing)).toBe(true);
    // A file that does not quote them comes whole.
    expect((await fetcher.fetch(`${host.url}/a.png`, { credentials })).bytes).toEqual(Buffer.from('png bytes'));

    const sent = host.requests.slice(before).map((request) => [request.path, request.headers.authorization]);
    expect(sent).toEqual([
      ['/echoing.mp4', `Bearer ${providerKey}`],
      ['/to-echoing', `Bearer ${providerKey}`],
      ['/echoing.mp4', `Bearer ${providerKey}`],
      ['/elsewhere', `Bearer ${providerKey}`],
      ['/echoing.mp4', undefined],
      ['/echoing.mp4', undefined],
      ['/a.png', `Bearer ${providerKey}`],
    ]);
    expect(host.requests.slice(before).map((request) => request.headers['x-org'])).toEqual([
      'org-7731-5520',
      'org-7731-5520',
      'org-7731-5520',
      'org-7731-5520',
      undefined,
      undefined,
      'org-7731-5520',
    ]);
    await fetcher.close();
  });

  it("ends a download its caller cut (a media job's deadline) with the caller's own reason, before or after the headers", async () => {
    const fetcher = open();
    for (const path of ['/slow', '/slow-body']) {
      const cut = new AbortController();
      const reason = new Error('the job did not finish within 2 seconds');
      setTimeout(() => cut.abort(reason), 50);
      await expect(fetcher.fetch(`${host.url}${path}`, { abort: cut.signal }), path).rejects.toBe(reason);
    }
    await fetcher.close();
  });

  it('refuses other schemes, credentials, endless redirects, files past the limit and servers that stall', async () => {
    const fetcher = open({ timeoutMs: 300 });
    await expect(fetcher.fetch('ftp://example.com/a.png')).rejects.toThrow(
      'only http and https URLs are fetched, not ftp:',
    );
    await expect(fetcher.fetch('http://user:secret@example.com/a.png')).rejects.toThrow(
      'URLs with credentials are not fetched',
    );
    await expect(fetcher.fetch('not a url')).rejects.toThrow('not a valid URL');
    await expect(fetcher.fetch(`${host.url}/hop`)).rejects.toThrow('more than 5 redirects');
    await expect(fetcher.fetch(`${host.url}/bad-redirect`)).rejects.toMatchObject({
      name: 'RemoteMediaError',
      message: `${new URL(host.url).host} redirected to an invalid URL`,
    });
    await expect(fetcher.fetch(`${host.url}/big`)).rejects.toThrow('larger than the limit of 4096 bytes');
    await expect(fetcher.fetch(`${host.url}/big-chunked`)).rejects.toThrow('larger than the limit of 4096 bytes');
    await expect(fetcher.fetch(`${host.url}/slow`)).rejects.toThrow('did not answer in time');
    await fetcher.close();
  });
});
