import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { capLabels } from '../components/cap-fields.tsx';
import { Dialog } from '../components/dialog.tsx';
import { ErrorText, LoadState, messageOf } from '../components/feedback.tsx';
import { TableHead } from '../components/table-head.tsx';
import { dateTime, usd } from '../format.ts';
import { type ApiKey, type CapName, type CreatedKey, capNames, type RateLimits } from '../types.ts';
import { useApi } from '../use-api.ts';
import { ConnectPanel } from './connect-panel.tsx';
import {
  CapsDialog,
  CreateKeyDialog,
  RateLimitsDialog,
  RawKey,
  RenameDialog,
  RevealDialog,
  RevokeDialog,
  rateLimitsText,
} from './key-dialogs.tsx';

type Action =
  | { kind: 'create' }
  | { kind: 'created'; key: CreatedKey }
  | { kind: 'reveal'; key: ApiKey }
  | { kind: 'rename'; key: ApiKey }
  | { kind: 'caps'; key: ApiKey }
  | { kind: 'rate-limits'; key: ApiKey }
  | { kind: 'revoke'; key: ApiKey };

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
  /** The key created on this page, for the Connect panel's examples: kept in memory only, until the page is left. */
  const [createdKey, setCreatedKey] = useState<string>();

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
      <ConnectPanel createdKey={createdKey} />
      {action?.kind === 'create' ? (
        <CreateKeyDialog
          onClose={() => setAction(undefined)}
          onCreated={(created) => {
            setCreatedKey(created.key);
            done({ kind: 'created', key: created });
          }}
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
                    <CapMeter cap={cap} spent={window.spent} limit={window.limit} />
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

/**
 * How full a cap is. A cap reached or passed (a cap lowered below what was spent, or 0) is drawn full in the
 * warning colour and said in words, not only by colour.
 */
function CapMeter({ cap, spent, limit }: { cap: CapName; spent: number; limit: number }) {
  const reached = spent >= limit;
  return (
    <>
      {usd(limit)}{' '}
      <meter
        class={reached ? 'over' : undefined}
        min={0}
        max={limit || 1}
        low={(limit || 1) * 0.8}
        high={(limit || 1) * 0.99}
        optimum={0}
        value={reached ? limit || 1 : spent}
        aria-label={`${capLabels[cap]} cap used`}
      />
      {reached ? (
        <span class="badge warn" data-testid={`cap-reached-${cap}`}>
          {spent > limit ? 'over cap' : 'cap reached'}
        </span>
      ) : null}
    </>
  );
}
