import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import type { ChatRequest, ChatStreamEvent } from '../../src/domain/chat.ts';
import { OutputLimit } from '../../src/domain/output-limit.ts';
import { Secret } from '../../src/domain/secret.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import type {
  ProviderTarget,
  RawExchange,
  RelayMeter,
  RelayOperation,
  RelayReading,
  ServedModel,
  TextAdapter,
} from '../../src/providers/provider-adapter.ts';
import { type FakeServer, type RecordedRequest, startFakeServer } from '../fakes/fake-server.ts';

/**
 * A vendor's documented answer, kept as a fixture (test/fixtures/vendor/<protocol>/<name>.json) with where it was
 * read: the request the vendor shows, and its answer as a JSON body or as the lines of a stream transcript.
 */
const VendorFixture = Type.Object({
  source: Type.Object({ url: Type.String({ minLength: 1 }), section: Type.String({ minLength: 1 }) }),
  note: Type.String({ minLength: 1 }),
  request: Type.Object({ method: Type.String(), path: Type.String(), body: Type.Optional(Type.Unknown()) }),
  response: Type.Object({
    status: Type.Integer(),
    contentType: Type.String(),
    body: Type.Optional(Type.Unknown()),
    transcript: Type.Optional(Type.Array(Type.String())),
  }),
});
export type VendorFixture = Static<typeof VendorFixture>;
const isVendorFixture = wireCheck(VendorFixture);

const fixtureRoot = path.join(import.meta.dirname, '../fixtures/vendor');

export function vendorFixture(protocol: string, name: string): VendorFixture {
  const file = path.join(fixtureRoot, protocol, `${name}.json`);
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isVendorFixture(value)) throw new Error(`${file} is not a vendor fixture`);
  if ((value.response.body === undefined) === (value.response.transcript === undefined))
    throw new Error(`${file} must hold either a response body or a stream transcript`);
  return value;
}

/** The answer's bytes as the vendor sends them: the JSON body, or the transcript's lines. */
export function answerText(fixture: VendorFixture): string {
  const { body, transcript } = fixture.response;
  return transcript ? `${transcript.join('\n')}\n` : JSON.stringify(body);
}

/** The request body the vendor shows, as an object to send on. */
export function requestBody(fixture: VendorFixture): Record<string, unknown> {
  const { body } = fixture.request;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error(`the fixture's request (${fixture.source.section}) has no JSON object body`);
  return Object.fromEntries(Object.entries(body));
}

/**
 * A loopback upstream that answers every request with the fixture's recorded answer, its bytes written in small
 * pieces so that the readers under test meet events split across reads.
 */
export function replayUpstream(fixture: VendorFixture): Promise<FakeServer> {
  const bytes = Buffer.from(answerText(fixture));
  return startFakeServer(async (_request, response) => {
    response.writeHead(fixture.response.status, { 'content-type': fixture.response.contentType });
    for (let at = 0; at < bytes.length; at += 17) {
      response.write(bytes.subarray(at, at + 17));
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  });
}

export const replayTarget = (baseUrl: string, apiKey = 'vendor-fixture-key'): ProviderTarget => ({
  baseUrl,
  apiKey: new Secret(apiKey),
  timeoutMs: 5_000,
  firstByteTimeoutMs: 5_000,
  connectTimeoutMs: 2_000,
  maxEventCharacters: 1024 * 1024,
  headers: {},
});

/**
 * Runs `call` against a loopback upstream that answers with the fixture, at `basePath` of its address (the
 * provider's base URL); answers the call's result and the requests the upstream received.
 */
export async function replayed<T>(
  recorded: VendorFixture,
  basePath: string,
  call: (target: ProviderTarget) => Promise<T>,
): Promise<{ result: T; sent: RecordedRequest[] }> {
  const upstream = await replayUpstream(recorded);
  try {
    const result = await call(replayTarget(`${upstream.url}${basePath}`));
    return { result, sent: upstream.requests };
  } finally {
    await upstream.close();
  }
}

export async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Streams `request` through a text adapter from a loopback upstream answering with the fixture. */
export function chatRecorded(
  text: TextAdapter,
  recorded: VendorFixture,
  { basePath, request }: { basePath: string; request: ChatRequest },
): Promise<{ result: ChatStreamEvent[]; sent: RecordedRequest[] }> {
  return replayed(recorded, basePath, (target) => collect(text.streamChat(request, { target })));
}

/** The text a stream of canonical events delivered. */
export const deltaText = (events: readonly ChatStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('');

/** The text a relay meter counted as delivered output, all of it. */
export const meteredText = (reading: RelayReading) => reading.output.since({ pieces: 0, kept: 0, beyond: 0 }).text;

/**
 * Relays the fixture's own request through a text adapter (pass-through), from a loopback upstream answering
 * with the fixture, and reads the relayed answer with the adapter's relay meter for `operation`.
 */
export function relayRecorded(
  text: TextAdapter,
  recorded: VendorFixture,
  {
    operation,
    basePath,
    upstreamModel,
    servedAs,
  }: { operation: RelayOperation; basePath: string; upstreamModel: string; servedAs?: ServedModel },
): Promise<{ result: { reading: RelayReading; relayed: string }; sent: RecordedRequest[] }> {
  const body = requestBody(recorded);
  const streaming = recorded.response.transcript !== undefined;
  return replayed(recorded, basePath, async (target) => {
    if (!text.relay || !text.relayMeter) throw new Error('the adapter does not relay');
    const exchange = await text.relay({ operation, upstreamModel, body }, { target });
    const meter = text.relayMeter(operation, {
      streaming,
      maxEventCharacters: target.maxEventCharacters,
      limit: roomyLimit(),
      ...(servedAs ? { servedAs } : {}),
    });
    return meterRelay(exchange, meter);
  });
}

/** An output limit no recorded answer reaches: the meter reads the whole answer. */
export const roomyLimit = () => new OutputLimit(1_000_000, (text) => text.length);

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks;
}

/** Feeds a relayed answer, as it came, through a relay meter; answers what the meter read and what it relayed. */
export async function meterRelay(
  exchange: RawExchange,
  meter: RelayMeter,
): Promise<{ reading: RelayReading; relayed: string }> {
  const relayed: Uint8Array[] = [];
  for (const chunk of await bytesOf(exchange.body)) relayed.push(meter.push(chunk));
  relayed.push(meter.end());
  return { reading: meter.reading(), relayed: Buffer.concat(relayed).toString('utf8') };
}

/** One event of a stream as written: its `event:` name if any, and its data (JSON, or a terminator such as `[DONE]`). */
export interface WrittenEvent {
  name: string | undefined;
  data: string;
}

/** Reads an SSE transcript as the server-sent events standard does (any line ending; `event:`, `data:` and comment lines). */
export function sseEvents(text: string): WrittenEvent[] {
  const events: WrittenEvent[] = [];
  let name: string | undefined;
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push({ name, data: data.join('\n') });
      name = undefined;
      data = [];
    } else if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  if (data.length > 0) events.push({ name, data: data.join('\n') });
  return events;
}

/** The elements of a whole JSON-array stream. */
export function jsonArrayEvents(text: string): WrittenEvent[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) throw new Error('the stream is not a JSON array');
  return value.map((element) => ({ name: undefined, data: JSON.stringify(element) }));
}

/** Each path of a JSON value (`$.a.b`, arrays as `[]`) and the JSON types found there. */
export type Shape = Map<string, Set<string>>;

const jsonType = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value;

/** `opaque` paths hold values of the caller's own making (a tool's arguments, metadata): only their type is compared. */
export function shapeOf(values: readonly unknown[], opaque: readonly string[] = []): Shape {
  const shape: Shape = new Map();
  const walk = (value: unknown, at: string) => {
    const types = shape.get(at) ?? new Set<string>();
    types.add(jsonType(value));
    shape.set(at, types);
    if (opaque.includes(at)) return;
    if (Array.isArray(value)) for (const item of value) walk(item, `${at}[]`);
    else if (typeof value === 'object' && value !== null)
      for (const [key, member] of Object.entries(value)) walk(member, `${at}.${key}`);
  };
  for (const value of values) walk(value, '$');
  return shape;
}

export interface ShapeRules {
  /** Paths the vendor's answer shows that a fake may leave out, each with the reason it may. */
  optional?: Readonly<Record<string, string>>;
  /** Paths the vendor's answer does not show that a fake may add, each with the reason it may. */
  extra?: Readonly<Record<string, string>>;
  opaque?: readonly string[];
}

const isUnder = (at: string, paths: readonly string[]) =>
  paths.some((allowed) => at === allowed || at.startsWith(`${allowed}.`) || at.startsWith(`${allowed}[]`));

/**
 * Where a fake's answers differ from the vendor's in shape: a path the vendor shows and the fake leaves out, a
 * path the fake adds, or a type at a path the vendor never shows there. Empty when they agree.
 */
export function shapeDifferences(
  vendor: readonly unknown[],
  fake: readonly unknown[],
  { optional = {}, extra = {}, opaque = [] }: ShapeRules = {},
): string[] {
  const expected = shapeOf(vendor, opaque);
  const actual = shapeOf(fake, opaque);
  const differences: string[] = [];
  for (const [at, types] of expected)
    if (!actual.has(at) && !isUnder(at, Object.keys(optional)))
      differences.push(`${at}: missing (vendor: ${[...types]})`);
  for (const [at, types] of actual) {
    const vendorTypes = expected.get(at);
    if (!vendorTypes) {
      if (!isUnder(at, Object.keys(extra))) differences.push(`${at}: not in the vendor's answer (fake: ${[...types]})`);
      continue;
    }
    const foreign = [...types].filter((type) => !vendorTypes.has(type));
    if (foreign.length > 0) differences.push(`${at}: fake ${foreign}, vendor ${[...vendorTypes]}`);
  }
  return differences;
}

/** Runs of the same kind collapsed into one: the order of a stream's framing, however many deltas each run has. */
export function collapsedKinds<T>(events: readonly T[], kindOf: (event: T) => string): string[] {
  const kinds: string[] = [];
  for (const event of events) {
    const kind = kindOf(event);
    if (kinds.at(-1) !== kind) kinds.push(kind);
  }
  return kinds;
}

/** The parsed data of a stream's JSON events, grouped by kind: each kind's shape is compared on its own. */
export function eventsByKind(
  events: readonly WrittenEvent[],
  kindOf: (event: WrittenEvent) => string,
): Map<string, unknown[]> {
  const groups = new Map<string, unknown[]>();
  for (const event of events) {
    if (!event.data.startsWith('{')) continue;
    const kind = kindOf(event);
    groups.set(kind, [...(groups.get(kind) ?? []), JSON.parse(event.data)]);
  }
  return groups;
}

/** A fake's answer to a vendor's request, as it came. */
export interface FakeAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** Sends the vendor's documented request (or `body` in its place) to a fake, with the fake's credentials. */
export async function askFake(
  fake: FakeServer,
  fixture: VendorFixture,
  { headers, body, path: askedPath }: { headers: Record<string, string>; body?: unknown; path?: string },
): Promise<FakeAnswer> {
  const sent = body ?? fixture.request.body;
  const response = await fetch(`${fake.url}${askedPath ?? fixture.request.path}`, {
    method: fixture.request.method,
    headers: { ...(sent === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(sent === undefined ? {} : { body: JSON.stringify(sent) }),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

/** How a stream is read and its events told apart, for comparing a fake's stream with the vendor's. */
export interface StreamReading {
  events(text: string): WrittenEvent[];
  /** The event's kind: its `event:` name and what it carries (several kinds may share one name). */
  kindOf(event: WrittenEvent): string;
  rules?: ShapeRules;
}

/**
 * How a fake's stream differs from the vendor's: the order of its kinds of event (runs collapsed) and, kind
 * by kind, the shape of their data. Empty when they agree.
 */
export function streamDifferences(vendorText: string, fakeText: string, reading: StreamReading): string[] {
  const vendor = reading.events(vendorText);
  const fake = reading.events(fakeText);
  const vendorKinds = collapsedKinds(vendor, reading.kindOf);
  const fakeKinds = collapsedKinds(fake, reading.kindOf);
  const differences: string[] = [];
  if (vendorKinds.join(' > ') !== fakeKinds.join(' > '))
    differences.push(`order: vendor ${vendorKinds.join(' > ')}; fake ${fakeKinds.join(' > ')}`);
  const fakeGroups = eventsByKind(fake, reading.kindOf);
  for (const [kind, events] of eventsByKind(vendor, reading.kindOf)) {
    const fakeEvents = fakeGroups.get(kind);
    if (!fakeEvents) continue;
    for (const difference of shapeDifferences(events, fakeEvents, reading.rules))
      differences.push(`${kind} ${difference}`);
  }
  return differences;
}

/**
 * A vendor event's data as a relay naming the catalog model `modelId` should pass it on: each of `fields` (paths
 * where the protocol names its model) that holds a string set to `modelId`, everything else as it came.
 */
export function servedData(data: string, fields: ReadonlyArray<readonly string[]>, modelId: string): unknown {
  const value: unknown = JSON.parse(data);
  for (const path of fields) {
    let holder: unknown = value;
    for (const step of path.slice(0, -1)) holder = isRecord(holder) ? holder[step] : undefined;
    const last = path.at(-1) ?? '';
    if (isRecord(holder) && typeof holder[last] === 'string') holder[last] = modelId;
  }
  return value;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The events of a relayed stream (name and data, JSON parsed) beside those a relay naming `served` should have
 * sent for the vendor's stream: to be equal.
 */
export function servedEvents(
  vendorText: string,
  relayedText: string,
  { events, served }: { events: (text: string) => WrittenEvent[]; served: ServedModel },
): { expected: unknown[]; relayed: unknown[] } {
  const parsed = (data: string) => (data.startsWith('{') ? JSON.parse(data) : data);
  return {
    expected: events(vendorText).map(({ name, data }) => ({
      name,
      data: data.startsWith('{') ? servedData(data, served.fields, served.modelId) : data,
    })),
    relayed: events(relayedText).map(({ name, data }) => ({ name, data: parsed(data) })),
  };
}
