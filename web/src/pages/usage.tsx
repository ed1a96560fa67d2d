import { useState } from 'preact/hooks';
import { query } from '../api.ts';
import { Choice } from '../components/choice.tsx';
import { Dialog } from '../components/dialog.tsx';
import { TableHead } from '../components/table-head.tsx';
import { LoadState } from '../components/feedback.tsx';
import { Pager } from '../components/pager.tsx';
import { dateTime, usd } from '../format.ts';
import { usageModalities, type ApiKey, type GenerationRecord, type Page, type PricedModel } from '../types.ts';
import { useApi } from '../use-api.ts';
import { RequestSummary, requestFields } from './request-summary.tsx';
import { SpendChart } from './spend-chart.tsx';

const pageSize = 20;

interface Filter {
  apiKeyId: string;
  model: string;
  modality: string;
}

/** Usage history paged like the compat listing, filterable by key, model and modality, each record's detail on demand. */
export function UsagePage({ onChanged }: { onChanged: () => void }) {
  const [filter, setFilter] = useState<Filter>({ apiKeyId: '', model: '', modality: '' });
  const [offset, setOffset] = useState(0);
  const [detail, setDetail] = useState<string>();
  const [refreshKey, setRefreshKey] = useState(0);
  const { data: page, error } = useApi<Page<GenerationRecord>>(
    `/api/v1/usage${query({ offset, limit: pageSize, ...filter })}`,
    refreshKey,
  );
  // The filters' choices; without them the history still shows, so their errors are not repeated here.
  const keys = useApi<ApiKey[]>('/api/v1/api-keys').data ?? [];
  const models = (useApi<PricedModel[]>('/api/v1/account/models').data ?? []).map((model) => model.modelId).sort();

  const change = (field: keyof Filter) => (value: string) => {
    setFilter({ ...filter, [field]: value });
    setOffset(0);
  };
  const keyName = (id: string | undefined) =>
    id === undefined ? 'session' : (keys.find((key) => key.id === id)?.name ?? id);

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Usage</h1>
        <button
          type="button"
          onClick={() => {
            setRefreshKey(refreshKey + 1);
            onChanged();
          }}
        >
          Refresh
        </button>
      </div>
      <SpendChart refreshKey={refreshKey} />
      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <form class="filters" onSubmit={(event) => event.preventDefault()}>
          <Choice
            label="Key"
            value={filter.apiKeyId}
            options={[{ value: '', label: 'All keys' }, ...keys.map((key) => ({ value: key.id, label: key.name }))]}
            onChange={change('apiKeyId')}
          />
          <Choice
            label="Model"
            value={filter.model}
            options={[{ value: '', label: 'All models' }, ...models.map((model) => ({ value: model, label: model }))]}
            onChange={change('model')}
          />
          <Choice
            label="Modality"
            value={filter.modality}
            options={[
              { value: '', label: 'All modalities' },
              ...usageModalities.map((modality) => ({ value: modality, label: modality })),
            ]}
            onChange={change('modality')}
          />
        </form>
        <LoadState error={error} loaded={page !== undefined} />
        {page ? (
          <>
            <div class="table-wrap">
              <table class="history">
                <caption class="visually-hidden">Usage records, newest first</caption>
                <TableHead
                  columns={[
                    'When',
                    'Model',
                    'Modality',
                    'Key',
                    'Status',
                    'Cost',
                    <span class="visually-hidden">Detail</span>,
                  ]}
                />
                <tbody>
                  {page.results.map((record) => (
                    <tr key={record.id}>
                      <td>{dateTime(record.createdAt)}</td>
                      <td>{record.model}</td>
                      <td>{record.modality}</td>
                      <td>{keyName(record.apiKeyId)}</td>
                      <td>{record.status}</td>
                      <td class="number">{usd(record.usdCost)}</td>
                      <td>
                        <button
                          type="button"
                          onClick={() => setDetail(record.id)}
                          aria-label={`Details of ${record.model} at ${dateTime(record.createdAt)}`}
                        >
                          Details
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {page.total === 0 ? (
              <p>
                No usage recorded{filter.apiKeyId || filter.model || filter.modality ? ' for this filter' : ' yet'}.
              </p>
            ) : null}
            <Pager
              offset={page.offset}
              limit={page.limit}
              total={page.total}
              onOffset={setOffset}
              label="Usage pages"
            />
          </>
        ) : null}
      </section>
      {detail ? <RecordDialog generationId={detail} keyName={keyName} onClose={() => setDetail(undefined)} /> : null}
    </>
  );
}

function RecordDialog({
  generationId,
  keyName,
  onClose,
}: {
  generationId: string;
  keyName: (id: string | undefined) => string;
  onClose: () => void;
}) {
  const { data: record, error } = useApi<GenerationRecord>(`/api/v1/usage/${encodeURIComponent(generationId)}`);
  const sent = record ? requestFields(record.request) : undefined;
  return (
    <Dialog title="Usage record" onClose={onClose} closeButton>
      <LoadState error={error} loaded={record !== undefined} />
      {record ? (
        <>
          <dl class="fields">
            <dt>Id</dt>
            <dd>
              <code>{record.id}</code>
            </dd>
            <dt>When</dt>
            <dd>{dateTime(record.createdAt)}</dd>
            <dt>Model</dt>
            <dd>{record.model}</dd>
            <dt>Modality</dt>
            <dd>{record.modality}</dd>
            <dt>Key</dt>
            <dd>{keyName(record.apiKeyId)}</dd>
            <dt>Status</dt>
            <dd>{record.status}</dd>
            <dt>Cost</dt>
            <dd>{usd(record.usdCost)}</dd>
            <dt>Duration</dt>
            <dd>{record.durationMs === undefined ? '—' : `${record.durationMs} ms`}</dd>
          </dl>
          <h3>What was sent</h3>
          {sent ? <RequestSummary request={sent} /> : <p class="muted">Not recorded.</p>}
          <h3>Usage</h3>
          <pre class="json">{JSON.stringify(record.usage ?? null, null, 2)}</pre>
        </>
      ) : null}
    </Dialog>
  );
}
