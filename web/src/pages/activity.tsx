import { useState } from 'preact/hooks';
import { query } from '../api.ts';
import { Choice } from '../components/choice.tsx';
import { LoadState } from '../components/feedback.tsx';
import { Pager } from '../components/pager.tsx';
import { TableHead } from '../components/table-head.tsx';
import { dateTime, usd } from '../format.ts';
import type { AuditAction, AuditEntry, Page } from '../types.ts';
import { useApi } from '../use-api.ts';

const pageSize = 20;

/** Every action the log records, as the page names it (typed by the answer's union, so none is left out). */
export const actionLabels: Record<AuditAction, string> = {
  'account.create': 'Account created',
  'account.signup': 'Signed up',
  'account.credits': 'Credit changed',
  'account.rate-limits': 'Account rate limits changed',
  'account.role': 'Role changed',
  'account.disable': 'Account disabled',
  'account.enable': 'Account enabled',
  'account.password': 'Password set',
  'api-key.create': 'Key created',
  'api-key.update': 'Key changed',
  'api-key.spend-caps': 'Key caps changed',
  'api-key.rate-limits': 'Key rate limits changed',
  'api-key.revoke': 'Key revoked',
  'media-job.cancel': 'Video task cancelled',
  'session.sign-in': 'Signed in',
  'session.sign-out': 'Signed out',
  'config.reload': 'Configuration reloaded',
  'config.secret-adopt': 'GATEWAY_SECRET adopted',
  'provider-row.test': 'Provider row tested',
  'catalog.model.put': 'Model set',
  'catalog.model.delete': 'Runtime model deleted',
  'catalog.model.disable': 'Model switched off',
  'catalog.model.enable': 'Model switched on',
  'catalog.price.set': 'Prices set',
  'webhook.create': 'Webhook endpoint added',
  'webhook.update': 'Webhook endpoint changed',
  'webhook.delete': 'Webhook endpoint removed',
  'webhook.rotate-secret': 'Webhook secret rotated',
  'webhook.test': 'Webhook test event sent',
  'account.balance-alert': 'Low-balance alert changed',
  'provider-key.create': 'Provider key added',
  'provider-key.update': 'Provider key changed',
  'provider-key.delete': 'Provider key removed',
};

const actionChoices = [
  { value: '', label: 'All changes' },
  // A reload of the gateway's configuration or the adoption of its secret, a catalog or a provider key change, or a
  // provider row's test concerns no account: never in an account's own log.
  ...Object.entries(actionLabels)
    .filter(
      ([value]) =>
        !value.startsWith('config.') &&
        value !== 'provider-row.test' &&
        !value.startsWith('catalog.') &&
        !value.startsWith('provider-key.'),
    )
    .map(([value, label]) => ({ value, label })),
];

type Flat = Record<string, unknown>;

/** A state's fields one level down (`limits.daily`), so that a change names the field that moved. */
function flatten(state: AuditEntry['before']): Flat {
  const flat: Flat = {};
  for (const [field, value] of Object.entries(state ?? {})) {
    if (typeof value === 'object' && value !== null)
      for (const [inner, innerValue] of Object.entries(value)) flat[`${field}.${inner}`] = innerValue;
    else flat[field] = value;
  }
  return flat;
}

function shown(field: string, value: unknown): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number' && (field === 'creditBalance' || field.startsWith('limits.'))) return usd(value);
  return String(value);
}

/** What moved between the state before and after: one line per field that differs. */
export function changesOf(entry: Pick<AuditEntry, 'before' | 'after'>): string[] {
  if (!entry.before || !entry.after) return [];
  const before = flatten(entry.before);
  const after = flatten(entry.after);
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((field) => before[field] !== after[field])
    .map((field) => `${field}: ${shown(field, before[field])} → ${shown(field, after[field])}`);
}

/** What moved in a change, one line per field. */
export function ChangeLines({ entry }: { entry: AuditEntry }) {
  return (
    <>
      {changesOf(entry).map((line) => (
        <div key={line}>{line}</div>
      ))}
    </>
  );
}

function subjectOf(entry: AuditEntry): string {
  const state = entry.after ?? entry.before;
  if (state && 'name' in state) return `Key "${state.name}"`;
  if (state && 'model' in state) return `${state.kind} task of ${state.model}`;
  return entry.subject.type === 'session' ? 'Session' : 'Account';
}

function actorOf(entry: AuditEntry): string {
  if (entry.actor.kind === 'operator') return 'The operator';
  return entry.actor.apiKeyId ? `You, with key ${entry.actor.apiKeyId}` : 'You';
}

/** The changes made to the account and its keys, by the account or by the operator, newest first. */
export function ActivityPage() {
  const [action, setAction] = useState('');
  const [offset, setOffset] = useState(0);
  const { data: page, error } = useApi<Page<AuditEntry>>(
    `/api/v1/audit-log${query({ offset, limit: pageSize, action })}`,
  );
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Activity</h1>
        <Choice
          inline
          label="Show"
          value={action}
          options={actionChoices}
          onChange={(chosen) => {
            setAction(chosen);
            setOffset(0);
          }}
        />
      </div>
      <p class="muted">
        Every change made to your account and its keys, by you or by the gateway's operator: sign-ins, keys, caps,
        limits and credit. Calls to models are in Usage.
      </p>
      <LoadState error={error} loaded={page !== undefined} />
      {page ? (
        <>
          <div class="table-wrap">
            <table class="history">
              <caption class="visually-hidden">Changes, newest first</caption>
              <TableHead columns={['When', 'Change', 'Of', 'By', 'What moved', 'From']} />
              <tbody>
                {page.results.map((entry) => (
                  <tr key={entry.id}>
                    <td>{dateTime(entry.createdAt)}</td>
                    <td>{actionLabels[entry.action]}</td>
                    <td>{subjectOf(entry)}</td>
                    <td>{actorOf(entry)}</td>
                    <td>
                      <ChangeLines entry={entry} />
                    </td>
                    <td>{entry.clientAddress ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.total === 0 ? <p>No changes{action ? ' of this kind' : ''} yet.</p> : null}
          <Pager
            offset={page.offset}
            limit={page.limit}
            total={page.total}
            onOffset={setOffset}
            label="Activity pages"
          />
        </>
      ) : null}
    </>
  );
}
