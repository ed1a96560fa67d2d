import { useEffect, useState } from 'preact/hooks';
import { request } from '../api.ts';
import { Dialog } from '../components/dialog.tsx';
import { ErrorText, LoadState, messageOf } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { useApi } from '../use-api.ts';
import {
  DeliveriesDialog,
  EndpointDialog,
  endpointPath,
  SecretDialog,
  type WebhookEndpoint,
} from './webhook-dialogs.tsx';

type Action =
  | { kind: 'create' }
  | { kind: 'edit'; endpoint: WebhookEndpoint }
  | { kind: 'secret'; title: string; secret: string }
  | { kind: 'deliveries'; endpoint: WebhookEndpoint }
  | { kind: 'remove'; endpoint: WebhookEndpoint };

/** The account's webhook endpoints (add, change, test, rotate, remove, delivery log) and its low-balance alert. */
export function WebhooksPage() {
  const [version, setVersion] = useState(0);
  const { data: endpoints, error: loadError } = useApi<WebhookEndpoint[]>('/api/v1/webhooks/endpoints', version);
  const [action, setAction] = useState<Action>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();

  const done = (next?: Action) => {
    setAction(next);
    setError(undefined);
    setVersion(version + 1);
  };
  const attempt = async (work: () => Promise<void>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  const toggle = (endpoint: WebhookEndpoint) =>
    attempt(async () => {
      await request('PATCH', endpointPath(endpoint), { isActive: !endpoint.isActive });
      done();
    });
  const sendTest = (endpoint: WebhookEndpoint) =>
    attempt(async () => {
      const { deliveryId } = await request<{ deliveryId: string }>('POST', endpointPath(endpoint, '/test'));
      setNotice(`Test event queued for ${endpoint.url} (webhook-id ${deliveryId}).`);
    });
  const rotate = (endpoint: WebhookEndpoint) =>
    attempt(async () => {
      const { secret } = await request<{ secret: string }>('POST', endpointPath(endpoint, '/rotate-secret'));
      setAction({ kind: 'secret', title: 'The new signing secret', secret });
    });

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Webhooks</h1>
        <button type="button" class="primary" onClick={() => setAction({ kind: 'create' })}>
          Add endpoint
        </button>
      </div>
      <p class="muted">
        The gateway POSTs the events you choose to your https endpoints, signed in the Standard Webhooks format,
        retrying with backoff until the endpoint answers 2xx.
      </p>
      <ErrorText message={error} />
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <LoadState error={loadError} loaded={endpoints !== undefined} />
      {endpoints?.length === 0 ? <p>No endpoints yet.</p> : null}
      <ul class="cards" aria-label="Your webhook endpoints">
        {endpoints?.map((endpoint) => (
          <li key={endpoint.id}>
            <article class="card" aria-label={endpoint.url}>
              <div class="card-head">
                <h2>
                  <code>{endpoint.url}</code>
                </h2>
                <span class={endpoint.isActive ? 'badge ok' : 'badge off'}>{endpoint.isActive ? 'Active' : 'Off'}</span>
              </div>
              <p class="muted">
                {endpoint.description ? `${endpoint.description} · ` : ''}created {dateTime(endpoint.createdAt)}
              </p>
              <p>
                Events:{' '}
                {endpoint.eventTypes.map((type, index) => (
                  <span key={type}>
                    {index > 0 ? ', ' : ''}
                    <code>{type}</code>
                  </span>
                ))}
              </p>
              <div class="actions">
                <button type="button" onClick={() => setAction({ kind: 'deliveries', endpoint })}>
                  Delivery log
                </button>
                <button type="button" onClick={() => sendTest(endpoint)}>
                  Send test event
                </button>
                <button type="button" onClick={() => setAction({ kind: 'edit', endpoint })}>
                  Change
                </button>
                <button type="button" onClick={() => rotate(endpoint)}>
                  Rotate secret
                </button>
                <button type="button" onClick={() => toggle(endpoint)}>
                  {endpoint.isActive ? 'Turn off' : 'Turn on'}
                </button>
                <button type="button" class="danger" onClick={() => setAction({ kind: 'remove', endpoint })}>
                  Remove
                </button>
              </div>
            </article>
          </li>
        ))}
      </ul>
      <BalanceAlert />
      {action?.kind === 'create' || action?.kind === 'edit' ? (
        <EndpointDialog
          {...(action.kind === 'edit' ? { endpoint: action.endpoint } : {})}
          onClose={() => setAction(undefined)}
          onSaved={(created) =>
            done(created ? { kind: 'secret', title: 'Your endpoint is added', secret: created.secret } : undefined)
          }
        />
      ) : null}
      {action?.kind === 'secret' ? (
        <SecretDialog title={action.title} secret={action.secret} onClose={() => setAction(undefined)} />
      ) : null}
      {action?.kind === 'deliveries' ? (
        <DeliveriesDialog endpoint={action.endpoint} onClose={() => setAction(undefined)} />
      ) : null}
      {action?.kind === 'remove' ? (
        <Dialog title="Remove the endpoint?" onClose={() => setAction(undefined)}>
          <p>
            <code>{action.endpoint.url}</code> is sent nothing more; its delivery log goes with it.
          </p>
          <div class="actions">
            <button
              type="button"
              class="danger"
              onClick={() =>
                attempt(async () => {
                  await request('DELETE', endpointPath(action.endpoint));
                  done();
                })
              }
            >
              Remove
            </button>
            <button type="button" autofocus onClick={() => setAction(undefined)}>
              Cancel
            </button>
          </div>
        </Dialog>
      ) : null}
    </>
  );
}

/** The balance below which `balance.low` is sent: a USD amount, or empty for none. */
function BalanceAlert() {
  const [version, setVersion] = useState(0);
  const { data, error: loadError } = useApi<{ threshold: number | null }>('/api/v1/webhooks/balance-alert', version);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (data) setTyped(data.threshold === null ? '' : String(data.threshold));
  }, [data]);
  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      const threshold = typed.trim() === '' ? null : Number(typed);
      if (threshold !== null && (!Number.isFinite(threshold) || threshold < 0))
        throw new Error('The threshold is an amount of USD, 0 or more');
      await request('PUT', '/api/v1/webhooks/balance-alert', { threshold });
      setSaved(true);
      setVersion(version + 1);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  return (
    <section aria-labelledby="balance-alert">
      <h2 id="balance-alert">Low-balance alert</h2>
      <p class="muted">
        <code>balance.low</code> is sent once when a charge takes the balance below this amount, and again only after it
        has been back at or above it. Leave it empty for no alert.
      </p>
      <LoadState error={loadError} loaded={data !== undefined} />
      <form onSubmit={save} class="stack">
        <label class="inline">
          Threshold (USD)
          <input
            type="text"
            inputMode="decimal"
            value={typed}
            onInput={(event) => setTyped(event.currentTarget.value)}
          />
        </label>
        <div class="actions">
          <button type="submit">Save threshold</button>
          {saved ? (
            <span class="muted" role="status">
              Saved
            </span>
          ) : null}
        </div>
      </form>
      <ErrorText message={error} />
    </section>
  );
}
