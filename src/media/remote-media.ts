import { lookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { credentialForms, quotesAnyForm } from '../domain/credential-scrubber.ts';
import type { Secret } from '../domain/secret.ts';

/** Media a client named by URL, fetched by the gateway so its limits can be checked on the bytes themselves. */
export interface FetchedMedia {
  /** The answer's `Content-Type` without parameters, lower-cased; undefined when it sent none. */
  contentType: string | undefined;
  bytes: Buffer;
}

export interface RemoteMediaOptions {
  timeoutMs: number;
  maxBytes: number;
  /**
   * Whether URLs may reach loopback, private, link-local and other non-public addresses. Off by default:
   * otherwise any key holder could make the gateway read the network it runs in.
   */
  allowPrivateAddresses: boolean;
}

/** A URL that could not be fetched; the message says why, for the client. */
export class RemoteMediaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteMediaError';
  }
}

const maxRedirects = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** IPv4 ranges that are not the public internet (IANA special-purpose registry). */
const nonPublicIpv4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/**
 * IPv6 ranges refused whole: `::/96` (unspecified, loopback and the deprecated IPv4-compatible form such as
 * `::127.0.0.1`), discard, the IETF block with Teredo, documentation, local-use NAT64, unique-local,
 * link-local, site-local and multicast.
 */
const nonPublicIpv6: readonly (readonly [string, number])[] = [
  ['::', 96],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

/** The two 16-bit groups of an IPv4 address, as IPv6 text writes them. */
function ipv4AsGroups(address: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * IPv6 prefixes that carry an IPv4 address, and where: an address in them is judged by the IPv4 address it
 * embeds. IPv4-mapped (`::ffff:0:0/96`) needs no entry: BlockList judges it by its IPv4 rules itself.
 */
const ipv4Embeddings: readonly { prefix: (ipv4Groups: string) => string; bits: number }[] = [
  { prefix: (groups) => `::ffff:0:${groups}`, bits: 96 }, // IPv4-translated (SIIT)
  { prefix: (groups) => `64:ff9b::${groups}`, bits: 96 }, // NAT64, well-known prefix
  { prefix: (groups) => `2002:${groups}::`, bits: 16 }, // 6to4
];

const nonPublic = new BlockList();
for (const [network, prefix] of nonPublicIpv4) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
  for (const embedding of ipv4Embeddings)
    nonPublic.addSubnet(embedding.prefix(ipv4AsGroups(network)), embedding.bits + prefix, 'ipv6');
}
for (const [network, prefix] of nonPublicIpv6) nonPublic.addSubnet(network, prefix, 'ipv6');

/** True for any address outside the public internet, IPv6 forms that embed an IPv4 address judged by it. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return true;
  return nonPublic.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Name resolution that refuses names resolving to a non-public address, before any connection is made. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((entry) => isNonPublicAddress(entry.address));
    if (refused) return callback(new RemoteMediaError(`${hostname} resolves to a non-public address`), []);
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(new RemoteMediaError(`${hostname} has no address`), []);
    callback(null, first.address, first.family);
  });
}

/**
 * An undici agent that connects only to public addresses (unless `allowPrivateAddresses`): a name is checked
 * on the addresses it resolves to at connect time, so a name that turns private later (DNS rebinding) is
 * refused too. Literal addresses skip resolution: `refuseNonPublicLiteral` judges them.
 */
export function addressCheckedAgent({
  allowPrivateAddresses,
}: Pick<RemoteMediaOptions, 'allowPrivateAddresses'>): Agent {
  return new Agent({ keepAliveTimeout: 10_000, connect: allowPrivateAddresses ? {} : { lookup: publicOnlyLookup } });
}

/** Refuses a URL whose host is a literal non-public address (names are judged when connecting). */
export function refuseNonPublicLiteral(
  url: URL,
  { allowPrivateAddresses }: Pick<RemoteMediaOptions, 'allowPrivateAddresses'>,
): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivateAddresses && isIP(host) !== 0 && isNonPublicAddress(host))
    throw new RemoteMediaError(`${url.hostname} is not a public address`);
}

/** Bytes the downloads of one request may still take; concurrent downloads draw from it as bytes arrive. */
export interface ByteBudget {
  readonly limit: number;
  remaining: number;
}

/**
 * Fetches media that clients pass by URL: http(s) only, redirects followed (each hop checked), at most
 * `maxBytes`, within `timeoutMs` in all, and by default never to a non-public address (checked on the
 * resolved addresses, so a public name pointing inside is refused too).
 */
export class RemoteMediaFetcher {
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: RemoteMediaOptions) {
    this.dispatcher = addressCheckedAgent(options);
  }

  /**
   * `budget`, shared by the downloads of one request, bounds their bytes in all. `credentials` (a provider's
   * authorization header) go to the first URL's origin only, never to another a redirect leads to, and a file
   * that quotes them is refused (the file is the provider's answer, and may echo them). `abort` (a media job's
   * deadline) cuts the download beside its own time-out; a download it cut rejects with its reason, as `fetch`
   * does, so the caller learns that its own signal ended it, not a host that timed out or could not be reached.
   */
  async fetch(
    url: string,
    {
      budget,
      credentials,
      abort,
    }: { budget?: ByteBudget; credentials?: Readonly<Record<string, Secret>>; abort?: AbortSignal } = {},
  ): Promise<FetchedMedia> {
    const signal = abort
      ? AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), abort])
      : AbortSignal.timeout(this.options.timeoutMs);
    try {
      return await this.fetchWithin(url, signal, { budget, credentials });
    } catch (error) {
      if (!abort?.aborted) throw error;
      const reason: unknown = abort.reason;
      throw reason;
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** `fetch` under `signal` (its time-out and its caller's): the redirects followed, each hop checked, then the body read. */
  private async fetchWithin(
    url: string,
    signal: AbortSignal,
    {
      budget,
      credentials,
    }: { budget?: ByteBudget | undefined; credentials?: Readonly<Record<string, Secret>> | undefined },
  ): Promise<FetchedMedia> {
    let current = this.checkedUrl(url);
    const origin = current.origin;
    for (let hop = 0; ; hop++) {
      const response = await this.get(current, signal, current.origin === origin ? credentials : undefined);
      if (redirectStatuses.has(response.statusCode)) {
        discard(response.body);
        const location = header(response.headers.location);
        if (!location) throw new RemoteMediaError(`${current.host} answered ${response.statusCode} without a Location`);
        if (hop >= maxRedirects) throw new RemoteMediaError(`more than ${maxRedirects} redirects`);
        if (!URL.canParse(location, current.href))
          throw new RemoteMediaError(`${current.host} redirected to an invalid URL`);
        current = this.checkedUrl(new URL(location, current).href);
        continue;
      }
      if (response.statusCode !== 200) {
        discard(response.body);
        throw new RemoteMediaError(`${current.host} answered HTTP ${response.statusCode}`);
      }
      const bytes = await this.read(response, signal, budget);
      // Cut out, they would corrupt the file (a video's offsets): a file that quotes them is refused whole.
      if (credentials && quotesAnyForm(bytes, credentialForms(Object.values(credentials))))
        throw new RemoteMediaError(
          `${current.host} answered with a file that quotes the credentials it was fetched with`,
        );
      return {
        contentType: header(response.headers['content-type'])?.split(';')[0]?.trim().toLowerCase() || undefined,
        bytes,
      };
    }
  }

  /**
   * The address rules of `fetch`, applied to a URL kept for later (a job's reference, fetched by the job or
   * by the provider): refused when it is not http(s), carries credentials, or names or resolves to a
   * non-public address. A name that does not resolve now is let through: the fetch itself checks again.
   */
  async check(url: string): Promise<void> {
    const host = this.checkedUrl(url).hostname.replace(/^\[|\]$/g, '');
    if (this.options.allowPrivateAddresses || isIP(host) !== 0) return;
    const resolved = await Promise.race([
      lookupAll(host, { all: true }).catch(() => []),
      new Promise<LookupAddress[]>((resolve) => setTimeout(resolve, this.options.timeoutMs, []).unref()),
    ]);
    if (resolved.some((entry) => isNonPublicAddress(entry.address)))
      throw new RemoteMediaError(`${host} resolves to a non-public address`);
  }

  private checkedUrl(text: string): URL {
    if (!URL.canParse(text)) throw new RemoteMediaError('not a valid URL');
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new RemoteMediaError(`only http and https URLs are fetched, not ${url.protocol}`);
    if (url.username || url.password) throw new RemoteMediaError('URLs with credentials are not fetched');
    refuseNonPublicLiteral(url, this.options);
    return url;
  }

  private async get(
    url: URL,
    signal: AbortSignal,
    credentials: Readonly<Record<string, Secret>> | undefined,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { accept: '*/*' };
    // Revealed only as the request's headers are written.
    for (const [name, value] of Object.entries(credentials ?? {})) headers[name] = value.reveal();
    try {
      return await request(url, { dispatcher: this.dispatcher, method: 'GET', signal, headers });
    } catch (error) {
      throw failure(error, url);
    }
  }

  private async read(
    response: Dispatcher.ResponseData,
    signal: AbortSignal,
    budget: ByteBudget | undefined,
  ): Promise<Buffer> {
    const declared = Number(header(response.headers['content-length']));
    if (Number.isFinite(declared) && declared > this.options.maxBytes) {
      discard(response.body);
      throw new RemoteMediaError(`the file is larger than the limit of ${this.options.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        // undici yields bytes; anything else is a broken download (caught below).
        if (!Buffer.isBuffer(chunk)) throw new TypeError('the body yielded something other than bytes');
        size += chunk.length;
        // Leaving the loop ends the download.
        if (size > this.options.maxBytes) {
          throw new RemoteMediaError(`the file is larger than the limit of ${this.options.maxBytes} bytes`);
        }
        if (budget) {
          budget.remaining -= chunk.length;
          if (budget.remaining < 0)
            throw new RemoteMediaError(`the media of this request are larger than ${budget.limit} bytes in all`);
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof RemoteMediaError) throw error;
      throw signal.aborted
        ? new RemoteMediaError(`no complete answer within ${this.options.timeoutMs} ms`)
        : new RemoteMediaError('the download broke off');
    }
    return Buffer.concat(chunks, size);
  }
}

/** Drops an answer's body unread; the abort this causes is expected, not an error. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function failure(error: unknown, url: URL): RemoteMediaError {
  if (error instanceof RemoteMediaError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof RemoteMediaError) return cause;
  if ((error as { name?: string }).name === 'TimeoutError' || (error as { name?: string }).name === 'AbortError')
    return new RemoteMediaError(`${url.host} did not answer in time`);
  return new RemoteMediaError(`${url.host} could not be reached`);
}
