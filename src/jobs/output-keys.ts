import type { MediaKind } from '../domain/usage-modalities.ts';

/**
 * Every object a job stores is under a folder of its own, named by its kind and id (`images/gen_1/0.png`). Some
 * are stored before any write of the job's row names them (an inline image or an audio before the answer is
 * recorded, a video before it is recorded, an output downloaded while archiving): a process killed in between
 * leaves them known to nothing but this naming, so a job that ends without succeeding deletes its whole folder.
 */
const folders: Readonly<Record<MediaKind, string>> = { image: 'images', video: 'videos', audio: 'audio' };

/** The key of a job's output `file` (`0.png`, `video.mp4`, `speech.mp3`). */
export function outputKey(job: { id: string; kind: MediaKind }, file: string): string {
  return `${folders[job.kind]}/${job.id.toLowerCase()}/${file}`;
}

/**
 * The folder of a job's outputs; undefined for a kind this release does not know (a job another release queued,
 * whose row cannot be read: it stored nothing this release would).
 */
export function outputFolder(job: { id: string; kind: string }): string | undefined {
  const folder = Object.entries(folders).find(([kind]) => kind === job.kind)?.[1];
  return folder === undefined ? undefined : `${folder}/${job.id.toLowerCase()}/`;
}
