import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { CopyButton } from '../components/copy-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { TableHead } from '../components/table-head.tsx';
import { ErrorText, LoadState, messageOf } from '../components/feedback.tsx';
import { dateTime, usd } from '../format.ts';
import {
  capNames,
  rateLimitNames,
  type ApiKey,
  type CapName,
  type CreatedKey,
  type RateLimitName,
  type RateLimits,
} from '../types.ts';
import { useApi } from '../use-api.ts';

type Action =
  | { kind: 'create' }
  | { kind: 'created'; key: CreatedKey }
  | { kind: 'reveal'; key: ApiKey }
  | { kind: 'rename'; key: ApiKey }
  | { kind: 'caps'; key: ApiKey }
  | { kind: 'rate-limits'; key: ApiKey }
  | { kind: 'revoke'; key: ApiKey };

const capLabels: Record<CapName, string> = { daily: 'Daily', weekly: 'Weekly', monthly: 'Monthly', total: 'Total' };
const rateLimitLabels: Record<RateLimitName, string> = {
  requestsPerMinute: 'Requests per minute',
  tokensPerMinute: 'Tokens per minute',
  concurrentRequests: 'Concurrent requests',
};
const capWindows: Record<CapName, string> = {
  daily: 'today (UTC)',
  weekly: 'this ISO week',
  monthly: 'this month',
  total: 'ever',
};

/** The spec's "account settings area, section API Keys": create, reveal, rename, caps, disable, revoke. */
export function KeysPage({ onChanged }: { onChanged: () => void }) {
  const [version, setVersion] = useState(0);
  const { data: keys, error: loadError } = useApi<ApiKey[]>('/api/v1/api-keys', version);
  const { data: accountLimits } = useApi<RateLimits>('/api/v1/account/rate-limits', version);
  const [error, setError] = useState<string>();
  const [action, setAction] = useState<Action>();

  const done = (next?: Action) => {
    setAction(next);
    setError(undefined);
    setVersion(version + 1);
    onChanged();
  };

  const toggle = async (key: ApiKey) => {
    try {
      await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(key.id)}`, { isActive: !key.isActive });
      done();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>API keys</h1>
        <button type="button" class="primary" onClick={() => setAction({ kind: 'create' })}>
          Create key
        </button>
      </div>
      <p class="muted">
        Send a key as <code>x-api-key</code> or <code>Authorization: Bearer</code>. Spend caps reset per UTC day, ISO
        week and month; the total never resets.
      </p>
      {accountLimits ? (
        <p class="muted">
          Account rate limits, set by the operator: {rateLimitsText(accountLimits) ?? 'none'}. Each applies to every
          key; a key's own limit can only be lower.
        </p>
      ) : null}
      <ErrorText message={error} />
      <LoadState error={loadError} loaded={keys !== undefined} />
      {keys?.length === 0 ? <p>No keys yet: create one to call the gateway.</p> : null}
      <ul class="cards" aria-label="Your API keys">
        {keys?.map((key) => (
          <li key={key.id}>
            <KeyCard apiKey={key} onAction={setAction} onToggle={() => toggle(key)} />
          </li>
        ))}
      </ul>
      {action?.kind === 'create' ? (
        <CreateKeyDialog
          onClose={() => setAction(undefined)}
          onCreated={(created) => done({ kind: 'created', key: created })}
        />
      ) : null}
      {action?.kind === 'created' ? (
        <Dialog title="Your new API key" onClose={() => setAction(undefined)}>
          <p>Copy it now. You can reveal it again from this page while it is not revoked.</p>
          <RawKey label="New API key" value={action.key.key} />
          <div class="actions">
            <button type="button" autofocus onClick={() => setAction(undefined)}>
              Done
            </button>
          </div>
        </Dialog>
      ) : null}
      {action?.kind === 'reveal' ? <RevealDialog apiKey={action.key} onClose={() => setAction(undefined)} /> : null}
      {action?.kind === 'rename' ? (
        <RenameDialog apiKey={action.key} onClose={() => setAction(undefined)} onDone={() => done()} />
      ) : null}
      {action?.kind === 'caps' ? (
        <CapsDialog apiKey={action.key} onClose={() => setAction(undefined)} onDone={() => done()} />
      ) : null}
      {action?.kind === 'rate-limits' ? (
        <RateLimitsDialog
          apiKey={action.key}
          accountLimits={accountLimits}
          onClose={() => setAction(undefined)}
          onDone={() => done()}
        />
      ) : null}
      {action?.kind === 'revoke' ? (
        <RevokeDialog apiKey={action.key} onClose={() => setAction(undefined)} onDone={() => done()} />
      ) : null}
    </>
  );
}

function KeyCard({
  apiKey,
  onAction,
  onToggle,
}: {
  apiKey: ApiKey;
  onAction: (action: Action) => void;
  onToggle: () => void;
}) {
  const headingId = `key-${apiKey.id}`;
  return (
    <article class="card" aria-labelledby={headingId}>
      <div class="card-head">
        <h2 id={headingId}>{apiKey.name}</h2>
        <span class={apiKey.isActive ? 'badge ok' : 'badge off'}>{apiKey.isActive ? 'Active' : 'Disabled'}</span>
      </div>
      <p class="muted">
        <code>{apiKey.prefix}</code> · created {dateTime(apiKey.createdAt)} · id <code>{apiKey.id}</code>
      </p>
      <SpendTable apiKey={apiKey} />
      <p class="muted">Rate limits: {rateLimitsText(apiKey.rateLimits) ?? "the account's"}</p>
      <div class="actions">
        <button type="button" onClick={() => onAction({ kind: 'reveal', key: apiKey })}>
          Reveal
        </button>
        <button type="button" onClick={() => onAction({ kind: 'rename', key: apiKey })}>
          Rename
        </button>
        <button type="button" onClick={() => onAction({ kind: 'caps', key: apiKey })}>
          Spend caps
        </button>
        <button type="button" onClick={() => onAction({ kind: 'rate-limits', key: apiKey })}>
          Rate limits
        </button>
        <button type="button" onClick={onToggle}>
          {apiKey.isActive ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="danger" onClick={() => onAction({ kind: 'revoke', key: apiKey })}>
          Revoke
        </button>
      </div>
    </article>
  );
}

/** What the key spent in each window, against its cap where it has one. */
function SpendTable({ apiKey }: { apiKey: ApiKey }) {
  return (
    <div class="table-wrap">
      <table class="spend">
        <caption class="visually-hidden">Spend of {apiKey.name} against its caps</caption>
        <TableHead columns={['Window', 'Spent', 'Cap', 'Remaining']} />
        <tbody>
          {capNames.map((cap) => {
            const window = apiKey.spend[cap];
            return (
              <tr key={cap}>
                <th scope="row" title={capWindows[cap]}>
                  {capLabels[cap]}
                </th>
                <td data-label="Spent">{usd(window.spent)}</td>
                <td data-label="Cap">
                  {window.limit === undefined ? (
                    <span class="muted">none</span>
                  ) : (
                    <>
                      {usd(window.limit)} {/* A cap of 0 is full from the start. */}
                      <meter
                        min={0}
                        max={window.limit || 1}
                        value={window.limit === 0 ? 1 : window.spent}
                        aria-label={`${capLabels[cap]} cap used`}
                      />
                    </>
                  )}
                </td>
                <td data-label="Remaining">{window.remaining === undefined ? '—' : usd(window.remaining)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function RawKey({ label, value }: { label: string; value: string }) {
  return (
    <div class="raw-key">
      <label>
        {label}
        <input
          type="text"
          readOnly
          value={value}
          spellcheck={false}
          onFocus={(event) => event.currentTarget.select()}
        />
      </label>
      <CopyButton text={value} />
    </div>
  );
}

function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (key: CreatedKey) => void }) {
  const [name, setName] = useState('');
  return (
    <FormDialog
      title="Create an API key"
      submitLabel="Create"
      onClose={onClose}
      action={async () => onCreated(await request<CreatedKey>('POST', '/api/v1/api-keys', { name }))}
    >
      <label>
        Name
        <input
          type="text"
          required
          maxLength={100}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </label>
    </FormDialog>
  );
}

function RevealDialog({ apiKey, onClose }: { apiKey: ApiKey; onClose: () => void }) {
  const { data, error } = useApi<{ key: string }>(`/api/v1/api-keys/${encodeURIComponent(apiKey.id)}/reveal`);
  const raw = data?.key;
  return (
    <Dialog title={`Key "${apiKey.name}"`} onClose={onClose} closeButton>
      <LoadState error={error} loaded={raw !== undefined} />
      {raw !== undefined ? <RawKey label="API key" value={raw} /> : null}
    </Dialog>
  );
}

function RenameDialog({ apiKey, onClose, onDone }: { apiKey: ApiKey; onClose: () => void; onDone: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const rename = async () => {
    await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}`, { name });
    onDone();
  };
  return (
    <FormDialog title={`Rename "${apiKey.name}"`} submitLabel="Save" onClose={onClose} action={rename}>
      <label>
        New name
        <input
          type="text"
          required
          maxLength={100}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </label>
    </FormDialog>
  );
}

/** Each cap as typed: empty clears it (sent as null), a number sets it, 0 included ("nothing may be spent"). */
function CapsDialog({ apiKey, onClose, onDone }: { apiKey: ApiKey; onClose: () => void; onDone: () => void }) {
  const [values, setValues] = useState<Record<CapName, string>>(() => {
    const initial = { daily: '', weekly: '', monthly: '', total: '' };
    for (const cap of capNames) {
      const limit = apiKey.limits[cap];
      if (limit !== undefined) initial[cap] = String(limit);
    }
    return initial;
  });
  const save = async () => {
    const body: Record<string, number | null> = {};
    for (const cap of capNames) {
      const typed = values[cap].trim();
      const amount = Number(typed);
      if (typed !== '' && !Number.isFinite(amount)) throw new Error(`the ${cap} cap must be a number of USD`);
      body[cap] = typed === '' ? null : amount;
    }
    await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}/usage-limit`, body);
    onDone();
  };
  return (
    <FormDialog title={`Spend caps of "${apiKey.name}"`} submitLabel="Save caps" onClose={onClose} action={save}>
      <p class="muted">USD. Leave a field empty for no cap. A call that would pass a cap is refused with 429.</p>
      {capNames.map((cap) => (
        <label key={cap}>
          {capLabels[cap]} cap (USD)
          <input
            type="number"
            inputMode="decimal"
            min={0}
            step="any"
            value={values[cap]}
            onInput={(event) => setValues({ ...values, [cap]: event.currentTarget.value })}
          />
        </label>
      ))}
    </FormDialog>
  );
}

/** The limits set, as a line ("requests per minute 5 · concurrent requests 2"), or undefined when none is. */
function rateLimitsText(limits: RateLimits): string | undefined {
  const set = rateLimitNames.filter((name) => limits[name] !== undefined);
  return set.length > 0
    ? set.map((name) => `${rateLimitLabels[name].toLowerCase()} ${limits[name]}`).join(' · ')
    : undefined;
}

/**
 * Each of the key's own rate limits as typed: empty removes it (sent as null: the account's applies), a whole
 * number sets it. The account's limits are the operator's and only shown: the smaller of the two applies.
 */
function RateLimitsDialog({
  apiKey,
  accountLimits,
  onClose,
  onDone,
}: {
  apiKey: ApiKey;
  accountLimits: RateLimits | undefined;
  onClose: () => void;
  onDone: () => void;
}) {
  const [values, setValues] = useState<Record<RateLimitName, string>>(() => {
    const initial = { requestsPerMinute: '', tokensPerMinute: '', concurrentRequests: '' };
    for (const name of rateLimitNames) {
      const limit = apiKey.rateLimits[name];
      if (limit !== undefined) initial[name] = String(limit);
    }
    return initial;
  });
  const save = async () => {
    const body: Record<string, number | null> = {};
    for (const name of rateLimitNames) {
      const typed = values[name].trim();
      const limit = Number(typed);
      if (typed !== '' && !(Number.isInteger(limit) && limit >= 1))
        throw new Error(`${rateLimitLabels[name].toLowerCase()} must be a whole number of at least 1`);
      body[name] = typed === '' ? null : limit;
    }
    await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}/rate-limits`, body);
    onDone();
  };
  return (
    <FormDialog title={`Rate limits of "${apiKey.name}"`} submitLabel="Save limits" onClose={onClose} action={save}>
      <p class="muted">
        Leave a field empty for the account's limit, if any. The account's limits are set by the operator and a key's
        can only be lower: the smaller applies. A call over a limit is refused with 429 and a retry-after.
      </p>
      {rateLimitNames.map((name) => (
        <label key={name}>
          {rateLimitLabels[name]}
          {accountLimits?.[name] !== undefined ? (
            <span class="muted"> (account: at most {accountLimits[name]})</span>
          ) : null}
          <input
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={values[name]}
            onInput={(event) => setValues({ ...values, [name]: event.currentTarget.value })}
          />
        </label>
      ))}
    </FormDialog>
  );
}

function RevokeDialog({ apiKey, onClose, onDone }: { apiKey: ApiKey; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    try {
      await request('DELETE', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}`);
      onDone();
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Revoke "${apiKey.name}"?`} onClose={onClose}>
      <p>
        Calls with this key will be refused (401) at once, in every gateway process. A revoked key cannot be revealed or
        enabled again.
      </p>
      <ErrorText message={error} />
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={revoke}>
          Revoke key
        </button>
        <button type="button" autofocus onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
