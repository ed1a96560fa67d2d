import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { CapFields, type CapValues, capsBody, noCaps } from '../components/cap-fields.tsx';
import { CopyButton } from '../components/copy-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { ErrorText, LoadState, messageOf } from '../components/feedback.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import {
  type ApiKey,
  type CapName,
  type CreatedKey,
  capNames,
  type RateLimitName,
  type RateLimits,
  rateLimitNames,
} from '../types.ts';
import { useApi } from '../use-api.ts';

const rateLimitLabels: Record<RateLimitName, string> = {
  requestsPerMinute: 'Requests per minute',
  tokensPerMinute: 'Tokens per minute',
  concurrentRequests: 'Concurrent requests',
};

export function RawKey({ label, value }: { label: string; value: string }) {
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

function KeyNameField({ label, value, onChange }: { label: string; value: string; onChange: (name: string) => void }) {
  return (
    <label>
      {label}
      <input
        type="text"
        required
        maxLength={100}
        value={value}
        onInput={(event) => onChange(event.currentTarget.value)}
      />
    </label>
  );
}

/** A new key, named, with its spend caps set from the start if the user wants them. */
export function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (key: CreatedKey) => void }) {
  const [name, setName] = useState('');
  const [caps, setCaps] = useState<CapValues>(noCaps);
  const create = async () => {
    const typed = capsBody(caps);
    const limits: Partial<Record<CapName, number>> = {};
    for (const cap of capNames) {
      const amount = typed[cap];
      if (amount !== null) limits[cap] = amount;
    }
    onCreated(await request<CreatedKey>('POST', '/api/v1/api-keys', { name, limits }));
  };
  return (
    <FormDialog title="Create an API key" submitLabel="Create" onClose={onClose} action={create}>
      <KeyNameField label="Name" value={name} onChange={setName} />
      <fieldset>
        <legend>Spend caps (optional)</legend>
        <p class="muted">USD. Leave a field empty for no cap. A call that would pass a cap is refused with 429.</p>
        <CapFields values={caps} onChange={setCaps} />
      </fieldset>
    </FormDialog>
  );
}

export function RevealDialog({ apiKey, onClose }: { apiKey: ApiKey; onClose: () => void }) {
  const { data, error } = useApi<{ key: string }>(`/api/v1/api-keys/${encodeURIComponent(apiKey.id)}/reveal`);
  const raw = data?.key;
  return (
    <Dialog title={`Key "${apiKey.name}"`} onClose={onClose} closeButton>
      <LoadState error={error} loaded={raw !== undefined} />
      {raw !== undefined ? <RawKey label="API key" value={raw} /> : null}
    </Dialog>
  );
}

export function RenameDialog({ apiKey, onClose, onDone }: { apiKey: ApiKey; onClose: () => void; onDone: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const rename = async () => {
    await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}`, { name });
    onDone();
  };
  return (
    <FormDialog title={`Rename "${apiKey.name}"`} submitLabel="Save" onClose={onClose} action={rename}>
      <KeyNameField label="New name" value={name} onChange={setName} />
    </FormDialog>
  );
}

/** The key's caps as they stand, each editable; a cap typed below what was already spent is flagged. */
export function CapsDialog({ apiKey, onClose, onDone }: { apiKey: ApiKey; onClose: () => void; onDone: () => void }) {
  const [values, setValues] = useState<CapValues>(() => {
    const initial = { ...noCaps };
    for (const cap of capNames) {
      const limit = apiKey.limits[cap];
      if (limit !== undefined) initial[cap] = String(limit);
    }
    return initial;
  });
  const spent = { daily: 0, weekly: 0, monthly: 0, total: 0 };
  for (const cap of capNames) spent[cap] = apiKey.spend[cap].spent;
  const save = async () => {
    await request('PATCH', `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}/usage-limit`, capsBody(values));
    onDone();
  };
  return (
    <FormDialog title={`Spend caps of "${apiKey.name}"`} submitLabel="Save caps" onClose={onClose} action={save}>
      <p class="muted">USD. Leave a field empty for no cap. A call that would pass a cap is refused with 429.</p>
      <CapFields values={values} onChange={setValues} spent={spent} />
    </FormDialog>
  );
}

/** The limits set, as a line ("requests per minute 5 · concurrent requests 2"), or undefined when none is. */
export function rateLimitsText(limits: RateLimits): string | undefined {
  const set = rateLimitNames.filter((name) => limits[name] !== undefined);
  return set.length > 0
    ? set.map((name) => `${rateLimitLabels[name].toLowerCase()} ${limits[name]}`).join(' · ')
    : undefined;
}

/**
 * Each of the key's own rate limits as typed: empty removes it (sent as null: the account's applies), a whole
 * number sets it. The account's limits are the operator's and only shown: the smaller of the two applies.
 */
export function RateLimitsDialog({
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

export function RevokeDialog({
  apiKey,
  onClose,
  onDone,
  path = `/api/v1/api-keys/${encodeURIComponent(apiKey.id)}`,
}: {
  apiKey: ApiKey;
  onClose: () => void;
  onDone: () => void;
  /** Where the revocation is sent: the account's own API, or the operator's. */
  path?: string;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    try {
      await request('DELETE', path);
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
