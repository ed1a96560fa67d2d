import type { DeliveredOutput } from '../domain/delivered-output.ts';
import type { OutputLimit } from '../domain/output-limit.ts';
import type { ChatParameterName, ChatRequest, ChatStreamEvent, TokenUsage } from '../domain/chat.ts';
import type { EmbeddingPartType, EmbeddingRequest, EmbeddingResult } from '../domain/embedding.ts';
import type { ImageGenerationRequest, ImageGenerationResult, ImageStreamEvent, ImageUsage } from '../domain/image.ts';
import type { Protocol } from '../domain/protocols.ts';
import type { Secret } from '../domain/secret.ts';
import type { ReadJson } from './shared/json-copy.ts';
import type {
  ReferenceAudioRequest,
  ReferenceAudioResult,
  SpeechSynthesisRequest,
  SpeechSynthesisResult,
} from '../domain/speech.ts';
import type { VideoGenerationRequest, VideoTaskReport } from '../domain/video.ts';

/** Where and how to reach one configured provider; passed in, never read by the adapter from anywhere else. */
export interface ProviderTarget {
  baseUrl: string;
  /** Revealed only by the HTTP client, as it writes the request's headers. */
  apiKey: Secret;
  /** Longest a whole exchange may take; past it the upstream is cut. */
  timeoutMs: number;
  /** Longest wait for the answer's headers and, after them, for each next chunk of the body. */
  firstByteTimeoutMs: number;
  connectTimeoutMs: number;
  /** Largest stream event (or JSON-array element) read from the upstream; past it the stream breaks its protocol. */
  maxEventCharacters: number;
  /** Headers the operator configured for every request to the provider; their values may be credentials. */
  headers: Readonly<Record<string, Secret>>;
  /** Told the headers of every answer sent with this target's key: its rate-limit headroom (shared/rate-limit-headroom.ts). */
  headroom?: HeadroomObserver;
}

/** Reads the rate-limit headers of an upstream's answers. */
export interface HeadroomObserver {
  observe(headers: Readonly<Record<string, string | string[] | undefined>>, status: number): void;
}

export interface CallOptions {
  target: ProviderTarget;
  /** Protocol headers the client sent that the protocol forwards (version and feature flags). */
  headers?: Readonly<Record<string, string>>;
  /** Aborts the call (a media job's deadline), beside the target's own time-outs. */
  signal?: AbortSignal;
  /** Largest output a media call assembles from its answer (`media.maxDownloadBytes`); bigger is a failed call. */
  maxOutputBytes?: number;
}

/** An upstream's answer relayed as it arrives (same-protocol pass-through). */
export interface RawExchange {
  status: number;
  contentType: string | undefined;
  body: AsyncIterable<Uint8Array>;
  /** Fields of the request the upstream does not take, left out by the adapter: named to the client as dropped. */
  dropped?: readonly string[];
  /**
   * The upstream reads input the forwarded request only names (input the server keeps: stored responses,
   * conversations, threads, cached content; or what a retrieval tool finds): no hold bounds its cost, which is
   * claimed past the hold at settlement. Each relay asks its protocol's description (src/protocols) of the body
   * it forwards; the parts the request carries are its decoder's to judge (TextGenerationInput.uncountedInput).
   */
  unseenInput?: boolean;
  /**
   * A whole JSON answer as the adapter read and parsed it to check it (`body` gives the same buffer), so that
   * its meter need not parse it again; the meter owns the value from then on (it may name the served model in it).
   */
  whole?: ReadJson | undefined;
}

/** What the gateway learns from reading a copy of a relayed answer. */
export interface RelayReading {
  usage: TokenUsage | undefined;
  /** The answer reached its natural end (a final JSON body, or a stream's finish). */
  complete: boolean;
  /** The upstream's own stream terminator (`[DONE]`) was among the bytes. */
  sawTerminator: boolean;
  /** The upstream reported an error inside the stream. */
  sawError: boolean;
  /** The text and tool-call arguments delivered so far, counted when the upstream reports no (or too little) usage. */
  output: DeliveredOutput;
  /** Where the protocol numbers its events (Responses' `sequence_number`): the last one read; an event added after it takes the next. */
  lastSequenceNumber?: number | undefined;
}

/**
 * Reads a copy of a relayed answer and decides what of it is relayed: whole events only, and none past the
 * output limit. Once the limit has ended the answer (`cut`), the rest of the upstream is not to be read.
 */
export interface RelayMeter {
  /** Reads the next bytes of the answer; answers the bytes to relay now (an event not yet complete is held back). */
  push(chunk: Uint8Array): Uint8Array;
  /** After the upstream's last byte, or once the answer is cut: the bytes left to relay (the length finish of a cut). */
  end(): Uint8Array;
  readonly cut: boolean;
  reading(): RelayReading;
}

export interface RelayMeterOptions {
  streaming: boolean;
  maxEventCharacters: number;
  /** The output limit the hold covers, enforced as the answer is relayed. */
  limit: OutputLimit;
  /** The model the relayed answer names: the catalog id the client asked for (the upstream's own when absent). */
  servedAs?: ServedModel;
  /** The exchange's whole answer as already read (`RawExchange.whole`): a JSON meter parses nothing again. */
  whole?: ReadJson | undefined;
  /**
   * The prompt's tokens as the gateway counts them: an answer the output limit ends, where its protocol says
   * usage, says what it is billed (`countedUsage`), which its upstream never reported.
   */
  promptTokens?: () => number;
}

/** A catalog model id, and the paths of the fields where an operation's answers and events name their model. */
export interface ServedModel {
  modelId: string;
  fields: ReadonlyArray<readonly [string, ...string[]]>;
}

export type RelayOperation =
  | 'chat-completions'
  | 'responses'
  | 'messages'
  | 'generate-content'
  | 'stream-generate-content-sse'
  | 'stream-generate-content-json';

/** A request in the upstream protocol's own shape, to forward as given. */
export interface RelayRequest {
  operation: RelayOperation;
  /** For protocols that address the model in the path rather than the body. */
  upstreamModel: string;
  body: Readonly<Record<string, unknown>>;
}

/** What a provider family offers for text; one stream of canonical events ending in a `finish`. */
export interface TextAdapter {
  streamChat(request: ChatRequest, options: CallOptions): AsyncIterable<ChatStreamEvent>;
  /**
   * Whether `streamChat` sends the request's parameter `name` on to `target` in some form; without this,
   * the adapter carries the basic sampling parameters and function tools only.
   */
  carries?(name: ChatParameterName, request: ChatRequest, target: ProviderTarget): boolean;
  /** The protocol answers a tool call by its function's name (`ToolResult.name`), which it cannot go without. */
  answersCallsByName?: boolean;
  /** Forwards a request of this protocol's own shape as given and relays the answer, for pass-through. */
  relay?(request: RelayRequest, options: CallOptions): Promise<RawExchange>;
  /** Reads usage from a copy of a relayed answer. */
  relayMeter?(operation: RelayOperation, options: RelayMeterOptions): RelayMeter;
}

/** What a provider family offers for embeddings: one vector per input, in input order. */
export interface EmbeddingAdapter {
  /** The input part types the protocol can carry; a catalog entry can only narrow them. */
  parts: readonly EmbeddingPartType[];
  embed(request: EmbeddingRequest, options: CallOptions): Promise<EmbeddingResult>;
}

/** A request of the OpenAI Images protocol's own shape (alpha surface), forwarded as given to an upstream of that protocol. */
export interface ImageRelayRequest {
  upstreamModel: string;
  body: Readonly<Record<string, unknown>>;
}

/** How a relayed images answer comes: as one JSON body or as a stream, whose events are bounded in size. */
export interface ImageRelayMeterOptions {
  streaming: boolean;
  maxEventCharacters: number;
  /** The exchange's whole answer as already read (`RawExchange.whole`). */
  whole?: ReadJson | undefined;
}

/** What a provider family offers for images: one synchronous generation, whose outputs the gateway archives. */
export interface ImageAdapter {
  /** Whether the family can split an image into layers (`request.layers`). */
  layers: boolean;
  /** Whether reference images may be sent as URLs; otherwise the core fetches them and sends bytes. */
  imageUrls: boolean;
  /**
   * Generates the images; an error answer throws `UpstreamHttpError`, an unreachable upstream
   * `UpstreamUnreachableError`, and an answer that breaks the protocol `UpstreamUnreachableError('protocol')`.
   */
  generate(request: ImageGenerationRequest, options: CallOptions): Promise<ImageGenerationResult>;
  /** The same generation streamed image by image, for families whose protocol streams image events. */
  stream?(request: ImageGenerationRequest, options: CallOptions): AsyncIterable<ImageStreamEvent>;
  /** Same-protocol pass-through of the alpha images route (JSON or SSE answer relayed as it arrives). */
  relay?(request: ImageRelayRequest, options: CallOptions): Promise<RawExchange>;
  /** Reads what a relayed images answer delivered, from a copy of its bytes. */
  relayMeter?(answer: ImageRelayMeterOptions): ImageRelayMeter;
}

/** What a relayed images answer delivered. */
export interface ImageRelayReading {
  /** Images the answer carried (each a billed output). */
  images: number;
  /** The quality the upstream says it rendered at. */
  quality?: string;
  /** The answer reached its natural end (a whole JSON body, or a stream's completion). */
  complete: boolean;
  usage: ImageUsage;
}

export interface ImageRelayMeter {
  push(chunk: Uint8Array): void;
  reading(): ImageRelayReading;
}

/** What a provider family offers for speech: one whole audio file per request. */
export interface SpeechAdapter {
  synthesize(request: SpeechSynthesisRequest, options: CallOptions): Promise<SpeechSynthesisResult>;
  /** Generation with reference (a prompt and voices, clips or an image), where the family offers it. */
  generateWithReference?(
    request: ReferenceAudioRequest,
    upstreamModel: string,
    options: CallOptions,
  ): Promise<ReferenceAudioResult>;
}

/**
 * What a provider family offers for video: an asynchronous task, created once and then polled. An error
 * answer throws `UpstreamHttpError`, an unreachable upstream `UpstreamUnreachableError`.
 */
export interface VideoAdapter {
  /** Refuses, with the 400 the client gets before anything is held, what the family cannot make. */
  check(request: Omit<VideoGenerationRequest, 'content'>, modelId: string): void;
  /** Creates the upstream task; answers its id. */
  createTask(request: VideoGenerationRequest, upstreamModel: string, options: CallOptions): Promise<string>;
  poll(taskId: string, options: CallOptions): Promise<VideoTaskReport>;
  /** Cancels a task the provider has not started; a no-op where the family cannot. */
  cancel(taskId: string, options: CallOptions): Promise<void>;
}

export interface ProviderAdapter {
  protocol: Protocol;
  text?: TextAdapter;
  embeddings?: EmbeddingAdapter;
  images?: ImageAdapter;
  speech?: SpeechAdapter;
  video?: VideoAdapter;
}

export type AdapterRegistry = ReadonlyMap<Protocol, ProviderAdapter>;
