import type { Movie } from 'mp4box';
import type { IAudioMetadata, IFileInfo, IOptions } from 'music-metadata';
import { wavSeconds } from './wav-audio.ts';

// The parsers load on first use: most processes never measure a file, and loading both at start costs about
// 25 MiB of resident memory.
let audioParser: Promise<typeof import('music-metadata')> | undefined;
let videoParser: Promise<typeof import('mp4box')> | undefined;

async function parseAudio(bytes: Uint8Array, info: IFileInfo, options: IOptions): Promise<IAudioMetadata> {
  audioParser ??= import('music-metadata');
  return (await audioParser).parseBuffer(bytes, info, options);
}

/**
 * Durations read from the media's own bytes, never taken from the client: WAV by the gateway itself, from its
 * format and the bytes after its data chunk's header (wav-audio.ts); MP4 and QuickTime from the movie header
 * box. `undefined` when the bytes are not that format or carry no duration.
 */
export interface VideoFacts {
  container: 'mp4' | 'mov';
  seconds: number;
}

/** Playable seconds of an audio file of `mediaType` (raw 16-bit mono PCM at `pcmSampleRate`); undefined when unreadable. */
export async function audioSeconds(
  bytes: Uint8Array,
  mediaType: string,
  pcmSampleRate: number,
): Promise<number | undefined> {
  if (mediaType === 'audio/L16') return bytes.length / 2 / pcmSampleRate;
  if (mediaType === 'audio/wav') return wavSeconds(bytes);
  try {
    const metadata = await parseAudio(
      bytes,
      { mimeType: mediaType, size: bytes.length },
      { duration: true, skipCovers: true },
    );
    const seconds = metadata.format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

/** ISO base media files: a major brand of `qt  ` (QuickTime) is MOV, any other MP4. */
export async function isoVideoFacts(bytes: Uint8Array): Promise<VideoFacts | undefined> {
  videoParser ??= import('mp4box');
  const { createFile, MP4BoxBuffer } = await videoParser;
  const file = createFile();
  let movie: Movie | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  try {
    const buffer = MP4BoxBuffer.fromArrayBuffer(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      0,
    );
    file.appendBuffer(buffer);
    file.flush();
  } catch {
    return undefined;
  }
  if (!movie || !(movie.timescale > 0) || !Number.isFinite(movie.duration)) return undefined;
  return { container: movie.brands[0] === 'qt  ' ? 'mov' : 'mp4', seconds: movie.duration / movie.timescale };
}
