import { useState } from 'preact/hooks';
import { query } from '../api.ts';
import { Choice } from '../components/choice.tsx';
import { LoadState } from '../components/feedback.tsx';
import { Pager } from '../components/pager.tsx';
import { bytes, dateTime } from '../format.ts';
import { mediaKinds, type MediaItem, type Page } from '../types.ts';
import { useApi } from '../use-api.ts';

const pageSize = 12;

const kindChoices = [
  { value: '', label: 'All' },
  ...mediaKinds.map((kind) => ({ value: kind, label: { image: 'Images', video: 'Videos', audio: 'Audio' }[kind] })),
];

const extensions: Record<string, string> = { jpeg: 'jpg', mpeg: 'mp3', quicktime: 'mov', L16: 'pcm' };

function extensionOf(mediaType: string): string {
  const subtype = mediaType.split('/')[1]?.split(';')[0] ?? 'bin';
  return extensions[subtype] ?? subtype;
}

type Output = MediaItem['outputs'][number];

/** What an output is called on its card: the base or a layer of a decomposition, else the nth of the job's outputs. */
export function outputName(item: MediaItem, output: Output, index: number): string {
  if (output.layer) {
    if (output.layer.zIndex === 0) return 'Base image';
    return `Layer ${output.layer.zIndex}${output.layer.name ? ` (${output.layer.name})` : ''}`;
  }
  const kind = item.kind === 'audio' ? 'Audio' : item.kind === 'video' ? 'Video' : 'Image';
  return item.outputs.length > 1 ? `${kind} ${index + 1} of ${item.outputs.length}` : kind;
}

/** Seconds as a clip length a person reads: "0.78 s", "12.5 s", "1:05". */
export function clipLength(seconds: number): string {
  if (seconds < 60) return `${Number(seconds.toFixed(2))} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** A clip's length: the job's own figure when it has one, else what the browser reads of the file. */
function useClipLength(output: Output): [string | undefined, (event: Event) => void] {
  const [measured, setMeasured] = useState<number>();
  const seconds = output.durationSeconds ?? measured;
  const onMetadata = (event: Event) => {
    const media = event.currentTarget;
    if (media instanceof HTMLMediaElement && Number.isFinite(media.duration)) setMeasured(media.duration);
  };
  return [seconds === undefined ? undefined : clipLength(seconds), onMetadata];
}

function Preview({ item, output, name }: { item: MediaItem; output: Output; name: string }) {
  const [length, onMetadata] = useClipLength(output);
  const label = `${name} by ${item.model}`;
  if (output.mediaType.startsWith('image/'))
    return (
      <img
        src={output.downloadUrl}
        alt={item.prompt ? `${name}: ${item.prompt}` : `Generated ${label}`}
        loading="lazy"
      />
    );
  const Player = output.mediaType.startsWith('video/')
    ? 'video'
    : output.mediaType.startsWith('audio/')
      ? 'audio'
      : null;
  if (!Player) return null;
  return (
    <>
      <Player
        src={output.downloadUrl}
        controls
        preload="metadata"
        aria-label={`Generated ${label}`}
        onLoadedMetadata={onMetadata}
      />
      {length ? <span class="clip-length">{length}</span> : null}
      {output.transcript ? <p class="prompt">“{output.transcript}”</p> : null}
    </>
  );
}

/** The account's archived outputs, previewed in place and downloadable through their signed (expiring) links. */
export function MediaPage() {
  const [kind, setKind] = useState('');
  const [offset, setOffset] = useState(0);
  const { data: page, error } = useApi<Page<MediaItem>>(`/api/v1/media${query({ offset, limit: pageSize, kind })}`);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Media</h1>
        <Choice
          inline
          label="Show"
          value={kind}
          options={kindChoices}
          onChange={(chosen) => {
            setKind(chosen);
            setOffset(0);
          }}
        />
      </div>
      <p class="muted">
        Images, videos and audio made with your keys, while they are archived. Download links expire: this page makes
        fresh ones each time.
      </p>
      <LoadState error={error} loaded={page !== undefined} />
      {page && page.total === 0 ? <p>No media yet.</p> : null}
      <ul class="media-grid" aria-label="Generated media">
        {page?.results.map((item) => (
          <li key={item.generationId}>
            <article class="card" aria-label={`${item.kind} by ${item.model}, ${dateTime(item.createdAt)}`}>
              {item.outputs.map((output, index) => {
                const name = outputName(item, output, index);
                return (
                  <figure key={output.assetId} data-testid="media-output">
                    <Preview item={item} output={output} name={name} />
                    <figcaption>
                      <strong>{name}</strong>
                      {output.layer?.box ? <span class="muted"> at ({output.layer.box.join(', ')})</span> : null}{' '}
                      <a
                        href={output.downloadUrl}
                        download={`${item.generationId}-${index}.${extensionOf(output.mediaType)}`}
                        aria-label={`Download ${name}`}
                      >
                        Download
                      </a>{' '}
                      <span class="muted">
                        {output.mediaType}, {bytes(output.bytes)}
                      </span>
                    </figcaption>
                  </figure>
                );
              })}
              <p>
                <strong>{item.model}</strong> · {dateTime(item.createdAt)}
              </p>
              {item.prompt ? (
                <p class="prompt">
                  {item.kind === 'audio' ? 'Text: ' : 'Prompt: '}
                  {item.prompt}
                </p>
              ) : null}
            </article>
          </li>
        ))}
      </ul>
      {page ? (
        <Pager offset={page.offset} limit={page.limit} total={page.total} onOffset={setOffset} label="Media pages" />
      ) : null}
    </>
  );
}
