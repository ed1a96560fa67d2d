import { useState } from 'preact/hooks';
import { query } from '../../api.ts';
import { Choice } from '../../components/choice.tsx';
import { LoadState } from '../../components/feedback.tsx';
import { Pager } from '../../components/pager.tsx';
import { TableHead } from '../../components/table-head.tsx';
import { dateTime } from '../../format.ts';
import type { AuditEntry, Page } from '../../types.ts';
import { useApi } from '../../use-api.ts';
import { ChangeLines, actionLabels } from '../activity.tsx';

const pageSize = 20;

const actionChoices = [
  { value: '', label: 'All changes' },
  ...Object.entries(actionLabels).map(([value, label]) => ({ value, label })),
];

function actorOf(entry: AuditEntry): string {
  if (entry.actor.kind === 'operator')
    return entry.actor.accountId ? `Operator ${entry.actor.accountId}` : 'Operator (admin token or CLI)';
  return entry.actor.apiKeyId ? `${entry.actor.accountId} with key ${entry.actor.apiKeyId}` : entry.actor.accountId;
}

function subjectOf(entry: AuditEntry): string {
  return entry.subject.id ? `${entry.subject.type} ${entry.subject.id}` : entry.subject.type;
}

/** Every change made on the gateway, by operators and accounts, newest first, filtered. */
export function OperatorAuditPage() {
  const [action, setAction] = useState('');
  const [typed, setTyped] = useState({ actor: '', accountId: '' });
  const [filter, setFilter] = useState({ actor: '', accountId: '' });
  const [offset, setOffset] = useState(0);
  const { data: page, error } = useApi<Page<AuditEntry>>(
    `/api/operator/v1/audit-log${query({ offset, limit: pageSize, action, ...filter })}`,
  );
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Audit log</h1>
      </div>
      <form
        class="filters"
        aria-label="Audit log filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter({ actor: typed.actor.trim(), accountId: typed.accountId.trim() });
          setOffset(0);
        }}
      >
        <Choice
          label="Change"
          value={action}
          options={actionChoices}
          onChange={(chosen) => {
            setAction(chosen);
            setOffset(0);
          }}
        />
        <label>
          Made by (operator, account or key id)
          <input value={typed.actor} onInput={(event) => setTyped({ ...typed, actor: event.currentTarget.value })} />
        </label>
        <label>
          Concerning account id
          <input
            value={typed.accountId}
            onInput={(event) => setTyped({ ...typed, accountId: event.currentTarget.value })}
          />
        </label>
        <div class="actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      <LoadState error={error} loaded={page !== undefined} />
      {page ? (
        <>
          <div class="table-wrap">
            <table class="history">
              <caption class="visually-hidden">Changes, newest first</caption>
              <TableHead columns={['When', 'Change', 'Of', 'Account', 'By', 'What moved', 'From']} />
              <tbody>
                {page.results.map((entry) => (
                  <tr key={entry.id}>
                    <td>{dateTime(entry.createdAt)}</td>
                    <td>{actionLabels[entry.action]}</td>
                    <td>{subjectOf(entry)}</td>
                    <td>{entry.accountId ? <code>{entry.accountId}</code> : ''}</td>
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
          {page.total === 0 ? <p>No changes match.</p> : null}
          <Pager
            offset={page.offset}
            limit={page.limit}
            total={page.total}
            onOffset={setOffset}
            label="Audit log pages"
          />
        </>
      ) : null}
    </>
  );
}
