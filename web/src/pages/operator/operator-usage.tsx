import { useState } from 'preact/hooks';
import { query } from '../../api.ts';
import { LoadState } from '../../components/feedback.tsx';
import { Pager } from '../../components/pager.tsx';
import { TableHead } from '../../components/table-head.tsx';
import { dateTime, usd } from '../../format.ts';
import type { UsageSearchPage } from '../../types.ts';
import { useApi } from '../../use-api.ts';

const pageSize = 20;

const fields = [
  { name: 'accountId', label: 'Account id' },
  { name: 'apiKeyId', label: 'Key id' },
  { name: 'model', label: 'Model' },
  { name: 'providerId', label: 'Provider' },
  { name: 'upstreamModel', label: 'Upstream model' },
  { name: 'status', label: 'Status' },
] as const;

type FieldName = (typeof fields)[number]['name'];
type Filter = Record<FieldName | 'since' | 'until', string>;

const emptyFilter: Filter = {
  accountId: '',
  apiKeyId: '',
  model: '',
  providerId: '',
  upstreamModel: '',
  status: '',
  since: '',
  until: '',
};

/** A `datetime-local` value (read as UTC) as the ISO 8601 moment the API takes. */
function moment(value: string): string | undefined {
  return value === '' ? undefined : new Date(`${value}:00Z`).toISOString();
}

/** The query of a filter: its moments as ISO 8601, empty fields left out. */
function filterQuery(filter: Filter): Record<string, string | undefined> {
  return { ...filter, since: moment(filter.since), until: moment(filter.until) };
}

/** Usage across every account: filters, totals, the records with their routes, and the CSV export. */
export function OperatorUsagePage() {
  const [typed, setTyped] = useState<Filter>(emptyFilter);
  const [filter, setFilter] = useState<Filter>(emptyFilter);
  const [offset, setOffset] = useState(0);
  const { data: page, error } = useApi<UsageSearchPage>(
    `/api/operator/v1/usage${query({ ...filterQuery(filter), offset, limit: pageSize })}`,
  );
  const type = (name: keyof Filter) => (event: Event) =>
    setTyped({ ...typed, [name]: (event.currentTarget as HTMLInputElement).value });
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Usage across accounts</h1>
        <a class="button" href={`/api/operator/v1/usage.csv${query(filterQuery(filter))}`} download="usage.csv">
          Download CSV
        </a>
      </div>
      <form
        class="filters"
        aria-label="Usage filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter(typed);
          setOffset(0);
        }}
      >
        {fields.map((field) => (
          <label key={field.name}>
            {field.label}
            <input value={typed[field.name]} onInput={type(field.name)} />
          </label>
        ))}
        <label>
          From (UTC)
          <input type="datetime-local" value={typed.since} onInput={type('since')} />
        </label>
        <label>
          Before (UTC)
          <input type="datetime-local" value={typed.until} onInput={type('until')} />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setTyped(emptyFilter);
              setFilter(emptyFilter);
              setOffset(0);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <LoadState error={error} loaded={page !== undefined} />
      {page ? (
        <>
          <p role="status" data-testid="usage-totals">
            {page.totals.generations} records, {usd(page.totals.usdCost)} in all
          </p>
          <div class="table-wrap">
            <table class="history">
              <caption class="visually-hidden">Usage records of every account, newest first</caption>
              <TableHead columns={['When', 'Account', 'Key', 'Model', 'Provider row', 'Status', 'Cost']} />
              <tbody>
                {page.results.map((record) => (
                  <tr key={record.id}>
                    <td>{dateTime(record.createdAt)}</td>
                    <td>
                      <code>{record.userId}</code>
                    </td>
                    <td>{record.apiKeyId ? <code>{record.apiKeyId}</code> : 'session'}</td>
                    <td>{record.model}</td>
                    <td>{record.route ? `${record.route.providerId}/${record.route.upstreamModel}` : ''}</td>
                    <td>{record.status}</td>
                    <td class="number">{usd(record.usdCost)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.total === 0 ? <p>No usage matches.</p> : null}
          <Pager offset={page.offset} limit={page.limit} total={page.total} onOffset={setOffset} label="Usage pages" />
        </>
      ) : null}
    </>
  );
}
