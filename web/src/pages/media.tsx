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

function Preview({ item, output, index }: { item: MediaItem; output: MediaItem['outputs'][number]; index: number }) {
  const label = `${item.kind} ${index + 1} of ${item.model}`;
  if (output.mediaType.startsWith('image/'))
    return (
      <img
        src={output.downloadUrl}
        alt={item.prompt ? `Generated image: ${item.prompt}` : `Generated ${label}`}
        loading="lazy"
      />
    );
  if (output.mediaType.startsWith('video/'))
    // biome-ignore lint/a11y/useMediaCaption: a model's generated video comes with no caption track to offer
    return <video src={output.downloadUrl} controls preload="metadata" aria-label={`Generated ${label}`} />;
  if (output.mediaType.startsWith('audio/'))
    // biome-ignore lint/a11y/useMediaCaption: a model's generated audio comes with no caption track to offer
    return <audio src={output.downloadUrl} controls preload="metadata" aria-label={`Generated ${label}`} />;
  return null;
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
              {item.outputs.map((output, index) => (
                <figure key={output.assetId}>
                  <Preview item={item} output={output} index={index} />
                  <figcaption>
                    <a
                      href={output.downloadUrl}
                      download={`${item.generationId}-${index}.${extensionOf(output.mediaType)}`}
                    >
                      Download {item.kind} {item.outputs.length > 1 ? index + 1 : ''}
                    </a>{' '}
                    <span class="muted">
                      {output.mediaType}, {bytes(output.bytes)}
                    </span>
                  </figcaption>
                </figure>
              ))}
              <p>
                <strong>{item.model}</strong> · {dateTime(item.createdAt)}
              </p>
              {item.prompt ? <p class="prompt">{item.prompt}</p> : null}
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
