/**
 * How long an ISO base media file (MP4, QuickTime) plays, read by the gateway from the file's own boxes. A file
 * states its length in several places: the movie header (`mvhd`), each track's header (`tkhd`), edit list
 * (`elst`) and media header (`mdhd`), the samples' durations (`stts`, and in a fragmented file each fragment's
 * `trun`, with the defaults of `trex` and `tfhd`), and a fragmented movie's `mehd`. Players go by the samples;
 * the length read is the longest stated, so that a header saying less than the rest never shortens what is
 * billed or let a file past a length limit.
 *
 * The walk is linear and of a fixed depth (movie, track, media, media information, sample table; fragment,
 * track fragment): each level is its own loop, nothing recurses, and every count is checked against the bytes of
 * its box before it is looped over.
 */

import { type Box, boxesIn, check, children, Fields, sumEntries, Unreadable } from './iso-boxes.ts';

export interface VideoFacts {
  container: 'mp4' | 'mov';
  seconds: number;
}

/** What one track states of its length, each in ticks of the time scale it is counted in. */
interface Track {
  /** `tkhd`'s duration and the sum of the edit list, in the movie's time scale. */
  movieTicks: number;
  /** `mdhd`'s time scale, in which the media's durations are counted. */
  mediaScale: number;
  mediaTicks: number;
  /** The samples' durations: `stts`, then every fragment's. */
  sampleTicks: number;
  /** Where the last fragment with a decode time (`tfdt`) ends. */
  fragmentEnd: number;
  /** `trex`'s duration of a sample that states none. */
  defaultSampleTicks: number;
}

interface Movie {
  scale: number;
  /** `mvhd`'s duration and `mehd`'s, in the movie's time scale. */
  ticks: number;
  tracks: Map<number, Track>;
}

/** `stts`: entries of a sample count and the duration of each of those samples. */
function sampleTableTicks(fields: Fields): number {
  return sumEntries(fields, { first: 8, count: fields.u32(4), size: 8 }, (at) => fields.u32(at) * fields.u32(at + 4));
}

/**
 * A header of the one layout `mvhd` and `mdhd` share: after the version, flags and two times (32 or 64 bits), the
 * time scale and the duration counted in it.
 */
function timeHeader(fields: Fields): { scale: number; ticks: number } {
  const wide = fields.version() === 1;
  return { scale: fields.u32(wide ? 20 : 12), ticks: fields.duration(wide ? 24 : 16, wide) };
}

/** `elst`: segments of the presentation, each with its duration in the movie's time scale. */
function editListTicks(fields: Fields): number {
  const wide = fields.version() === 1;
  return sumEntries(fields, { first: 8, count: fields.u32(4), size: wide ? 20 : 12 }, (at) =>
    fields.duration(at, wide),
  );
}

/** The media box: its header's time scale and duration, and its sample table's durations. */
function readMedia(view: DataView, media: Box, track: Track): void {
  let header = false;
  for (const box of children(view, media)) {
    if (box.type === 'mdhd') {
      check(!header);
      header = true;
      ({ scale: track.mediaScale, ticks: track.mediaTicks } = timeHeader(new Fields(view, box)));
    } else if (box.type === 'minf') {
      for (const information of children(view, box)) {
        if (information.type !== 'stbl') continue;
        for (const table of children(view, information))
          if (table.type === 'stts') track.sampleTicks += sampleTableTicks(new Fields(view, table));
      }
    }
  }
  // A track without its time scale cannot be played, and its samples cannot be counted.
  check(header && track.mediaScale > 0);
}

/** A track: its id (what fragments name it by) and what it states of its length. */
function readTrack(view: DataView, trak: Box): [number, Track] {
  const track: Track = {
    movieTicks: 0,
    mediaScale: 0,
    mediaTicks: 0,
    sampleTicks: 0,
    fragmentEnd: 0,
    defaultSampleTicks: 0,
  };
  let id: number | undefined;
  let media = false;
  for (const box of children(view, trak)) {
    if (box.type === 'tkhd') {
      check(id === undefined);
      const fields = new Fields(view, box);
      const wide = fields.version() === 1;
      id = fields.u32(wide ? 20 : 12);
      track.movieTicks = Math.max(track.movieTicks, fields.duration(wide ? 28 : 20, wide));
    } else if (box.type === 'edts') {
      for (const edits of children(view, box))
        if (edits.type === 'elst')
          track.movieTicks = Math.max(track.movieTicks, editListTicks(new Fields(view, edits)));
    } else if (box.type === 'mdia') {
      check(!media);
      media = true;
      readMedia(view, box, track);
    }
  }
  check(id !== undefined && media);
  return [id, track];
}

/** The movie box: its header, its tracks, and what its `mvex` says of the fragments that follow. */
function readMovie(view: DataView, moov: Box): Movie {
  const movie: Movie = { scale: 0, ticks: 0, tracks: new Map() };
  let header = false;
  const defaults = new Map<number, number>();
  for (const box of children(view, moov)) {
    if (box.type === 'mvhd') {
      check(!header);
      header = true;
      const stated = timeHeader(new Fields(view, box));
      movie.scale = stated.scale;
      movie.ticks = Math.max(movie.ticks, stated.ticks);
    } else if (box.type === 'trak') {
      const [id, track] = readTrack(view, box);
      check(!movie.tracks.has(id));
      movie.tracks.set(id, track);
    } else if (box.type === 'mvex') {
      for (const entry of children(view, box)) {
        const fields = new Fields(view, entry);
        if (entry.type === 'mehd') movie.ticks = Math.max(movie.ticks, fields.duration(4, fields.version() === 1));
        if (entry.type === 'trex') defaults.set(fields.u32(4), fields.u32(12));
      }
    }
  }
  check(header && movie.scale > 0);
  for (const [id, ticks] of defaults) {
    const track = movie.tracks.get(id);
    if (track) track.defaultSampleTicks = ticks;
  }
  return movie;
}

/** A track run (`trun`): the durations it writes per sample, or its sample count at the default duration. */
function runTicks(fields: Fields, defaultTicks: number): number {
  const flags = fields.u32(0) & 0xff_ffff;
  const count = fields.u32(4);
  // After the count: a data offset, the first sample's flags, then per sample a duration, size, flags and
  // composition offset, each present when its flag is set.
  const first = 8 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
  if (!(flags & 0x100)) return count * defaultTicks;
  const entrySize = 4 * [0x100, 0x200, 0x400, 0x800].filter((flag) => flags & flag).length;
  return sumEntries(fields, { first, count, size: entrySize }, (at) => fields.u32(at));
}

/** A track fragment (`traf`): adds its samples' durations to the track it names. */
function readTrackFragment(view: DataView, traf: Box, movie: Movie): void {
  let track: Track | undefined;
  let defaultTicks = 0;
  let baseTicks: number | undefined;
  let ticks = 0;
  for (const box of children(view, traf)) {
    const fields = new Fields(view, box);
    if (box.type === 'tfhd') {
      check(track === undefined);
      const flags = fields.u32(0) & 0xff_ffff;
      track = movie.tracks.get(fields.u32(4));
      check(track !== undefined);
      defaultTicks = track.defaultSampleTicks;
      // After the track id: a base data offset (8 bytes) and a sample description index (4), when present.
      if (flags & 0x8) defaultTicks = fields.u32(8 + (flags & 0x1 ? 8 : 0) + (flags & 0x2 ? 4 : 0));
    } else if (box.type === 'tfdt') {
      baseTicks = fields.duration(4, fields.version() === 1);
    } else if (box.type === 'trun') {
      // The header comes first in a fragment: a run before it has no track and no defaults.
      check(track !== undefined);
      ticks += runTicks(fields, defaultTicks);
    }
  }
  if (!track) return;
  track.sampleTicks += ticks;
  if (baseTicks !== undefined) track.fragmentEnd = Math.max(track.fragmentEnd, baseTicks + ticks);
}

/** The longest length the movie and its tracks state, in seconds. */
function longestSeconds(movie: Movie): number {
  let seconds = movie.ticks / movie.scale;
  for (const track of movie.tracks.values()) {
    const mediaTicks = Math.max(track.mediaTicks, track.sampleTicks, track.fragmentEnd);
    seconds = Math.max(seconds, track.movieTicks / movie.scale, mediaTicks / track.mediaScale);
  }
  return seconds;
}

/**
 * The container (a major brand of `qt  ` is MOV, any other MP4) and the longest length the file states;
 * `undefined` when the bytes are not such a file, have no movie or more than one, or cannot be walked.
 */
export function isoVideoFacts(bytes: Uint8Array): VideoFacts | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let container: VideoFacts['container'] | undefined;
  let movie: Movie | undefined;
  try {
    for (const box of boxesIn(view, 0, bytes.byteLength)) {
      if (box.type === 'ftyp' && container === undefined)
        container = new Fields(view, box).fourCc(0) === 'qt  ' ? 'mov' : 'mp4';
      else if (box.type === 'moov') {
        check(movie === undefined);
        movie = readMovie(view, box);
      } else if (box.type === 'moof') {
        // Fragments follow the movie that describes their tracks.
        check(movie !== undefined);
        for (const fragment of children(view, box))
          if (fragment.type === 'traf') readTrackFragment(view, fragment, movie);
      }
    }
  } catch (error) {
    if (error instanceof Unreadable) return undefined;
    throw error;
  }
  if (!movie) return undefined;
  return { container: container ?? 'mp4', seconds: longestSeconds(movie) };
}
