import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { Dialog } from '../components/dialog.tsx';
import { LoadState } from '../components/feedback.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { TableHead } from '../components/table-head.tsx';
import { dateTime } from '../format.ts';
import { useApi } from '../use-api.ts';
import { RawKey } from './key-dialogs.tsx';

/** The events an endpoint may take, as the gateway names them (docs/webhooks.md), with what each says. */
export const eventTypes = [
  ['media_job.completed', 'A media job succeeded'],
  ['media_job.failed', 'A media job failed'],
  ['balance.low', 'The balance fell below the threshold'],
  ['api_key.cap_reached', 'A key reached 80% or 100% of a spend cap'],
  ['api_key.disabled', 'A key was disabled or revoked'],
] as const;

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  isActive: boolean;
  createdAt: string;
}

interface Delivery {
  id: string;
  eventType: string;
  state: 'queued' | 'delivering' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  log: Array<{
    attempt: number;
    statusCode: number | null;
    latencyMs: number;
    error: string | null;
    responseExcerpt: string | null;
    at: string;
  }>;
}

const endpointsPath = '/api/v1/webhooks/endpoints';
export const endpointPath = (endpoint: WebhookEndpoint, tail = '') =>
  `${endpointsPath}/${encodeURIComponent(endpoint.id)}${tail}`;

/** The event checkboxes of an endpoint's form. */
function EventChoices({ chosen, onChange }: { chosen: string[]; onChange: (chosen: string[]) => void }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {eventTypes.map(([type, meaning]) => (
        <label key={type} class="inline">
          <input
            type="checkbox"
            checked={chosen.includes(type)}
            onChange={(event) =>
              onChange(event.currentTarget.checked ? [...chosen, type] : chosen.filter((other) => other !== type))
            }
          />
          <code>{type}</code> <span class="muted">{meaning}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** A new endpoint or the changes to one: URL, description and events. */
export function EndpointDialog({
  endpoint,
  onClose,
  onSaved,
}: {
  endpoint?: WebhookEndpoint;
  onClose: () => void;
  onSaved: (created?: { secret: string }) => void;
}) {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [chosen, setChosen] = useState<string[]>(endpoint?.eventTypes ?? []);
  const save = async () => {
    if (chosen.length === 0) throw new Error('Choose at least one event');
    const body = { url, description, eventTypes: chosen };
    if (endpoint) {
      await request('PATCH', endpointPath(endpoint), body);
      onSaved();
    } else onSaved(await request<{ secret: string }>('POST', endpointsPath, body));
  };
  return (
    <FormDialog
      title={endpoint ? 'Change the endpoint' : 'Add an endpoint'}
      submitLabel={endpoint ? 'Save' : 'Add endpoint'}
      onClose={onClose}
      action={save}
    >
      <label>
        URL (https)
        <input
          type="url"
          required
          maxLength={2000}
          placeholder="https://hooks.example.com/gateway"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
      </label>
      <label>
        Description (optional)
        <input
          type="text"
          maxLength={500}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
      </label>
      <EventChoices chosen={chosen} onChange={setChosen} />
    </FormDialog>
  );
}

/** The signing secret, shown once: at creation and after a rotation. */
export function SecretDialog({ title, secret, onClose }: { title: string; secret: string; onClose: () => void }) {
  return (
    <Dialog title={title} onClose={onClose}>
      <p>
        Copy it now: it is not shown again. Verify each request's <code>webhook-signature</code> with it (a Standard
        Webhooks library does).
      </p>
      <RawKey label="Signing secret" value={secret} />
      <div class="actions">
        <button type="button" autofocus onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

/** The endpoint's newest deliveries, each with every attempt: status, latency, error, the answer's start. */
export function DeliveriesDialog({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const [version, setVersion] = useState(0);
  const { data, error } = useApi<{ results: Delivery[]; total: number }>(
    endpointPath(endpoint, '/deliveries?limit=20'),
    version,
  );
  return (
    <Dialog title={`Deliveries to ${endpoint.url}`} onClose={onClose} closeButton>
      <div class="actions">
        <button type="button" onClick={() => setVersion(version + 1)}>
          Refresh
        </button>
      </div>
      <LoadState error={error} loaded={data !== undefined} />
      {data?.results.length === 0 ? <p>Nothing sent yet.</p> : null}
      {data && data.results.length > 0 ? (
        <div class="table-wrap">
          <table data-testid="deliveries">
            <caption class="visually-hidden">Deliveries, newest first</caption>
            <TableHead columns={['Event', 'State', 'Attempts', 'Queued']} />
            <tbody>
              {data.results.map((delivery) => (
                <tr key={delivery.id}>
                  <td data-label="Event">
                    <code>{delivery.eventType}</code>
                    <div class="muted">
                      <code>{delivery.id}</code>
                    </div>
                  </td>
                  <td data-label="State">
                    {delivery.state}
                    {delivery.nextAttemptAt ? (
                      <div class="muted">next try {dateTime(delivery.nextAttemptAt)}</div>
                    ) : null}
                  </td>
                  <td data-label="Attempts">
                    <ol>
                      {delivery.log.map((attempt) => (
                        <li key={attempt.attempt}>
                          {attempt.statusCode ?? 'no answer'} · {attempt.latencyMs} ms
                          {attempt.error ? <span class="muted"> · {attempt.error}</span> : null}
                          {attempt.responseExcerpt ? (
                            <div class="muted">
                              <code>{attempt.responseExcerpt.slice(0, 120)}</code>
                            </div>
                          ) : null}
                        </li>
                      ))}
                    </ol>
                  </td>
                  <td data-label="Queued">{dateTime(delivery.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Dialog>
  );
}
