import type { IAudioMetadata, IFileInfo, IOptions } from 'music-metadata';
import { wavSeconds } from './wav-audio.ts';

/**
 * Durations read from the media's own bytes, never taken from the client. WAV, and MP4 or QuickTime, are read
 * by the gateway itself at the longest length the file holds (wav-audio.ts, iso-video.ts); other audio formats
 * by their parser.
 */
export { isoVideoFacts, type VideoFacts } from './iso-video.ts';

// The parser of other audio formats loads on first use: most processes never measure such a file, and loading
// it at start costs resident memory they would not use.
let audioParser: Promise<typeof import('music-metadata')> | undefined;

async function parseAudio(bytes: Uint8Array, info: IFileInfo, options: IOptions): Promise<IAudioMetadata> {
  audioParser ??= import('music-metadata');
  return (await audioParser).parseBuffer(bytes, info, options);
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
