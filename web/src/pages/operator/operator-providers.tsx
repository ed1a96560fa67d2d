import { useState } from 'preact/hooks';
import { request } from '../../api.ts';
import { ErrorText, LoadState, messageOf } from '../../components/feedback.tsx';
import { TableHead } from '../../components/table-head.tsx';
import type { ProviderRow, RowTestResult } from '../../types.ts';
import { useApi } from '../../use-api.ts';

const breakerLabels: Record<ProviderRow['breaker'], string> = {
  closed: 'Closed',
  open: 'Open: skipped',
  'half-open': 'Probing',
};

function milliseconds(value: number | undefined): string {
  return value === undefined ? '—' : `${value} ms`;
}

function testOutcome(result: RowTestResult): string {
  const row = `${result.providerId}/${result.upstreamModel}`;
  if (result.ok) return `${row} answered in ${result.latencyMs} ms${result.sample ? `: ${result.sample}` : ''}`;
  return `${row} failed after ${result.latencyMs} ms: ${result.error ?? 'failed'}`;
}

/** Each provider row's health from this process's counters, with a "test this row" action. */
export function OperatorProvidersPage() {
  const [version, setVersion] = useState(0);
  const { data: rows, error } = useApi<ProviderRow[]>('/api/operator/v1/providers', version);
  const [testing, setTesting] = useState<string>();
  const [outcome, setOutcome] = useState<{ text: string; ok: boolean }>();
  const [testError, setTestError] = useState<string>();

  const test = async (row: ProviderRow) => {
    const id = `${row.providerId}/${row.upstreamModel}`;
    setTesting(id);
    setOutcome(undefined);
    setTestError(undefined);
    try {
      const result = await request<RowTestResult>('POST', '/api/operator/v1/providers/test', {
        providerId: row.providerId,
        upstreamModel: row.upstreamModel,
      });
      setOutcome({ text: testOutcome(result), ok: result.ok });
    } catch (caught) {
      setTestError(messageOf(caught));
    } finally {
      setTesting(undefined);
    }
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Providers</h1>
        <button type="button" onClick={() => setVersion(version + 1)}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Breaker, error rate and latency come from the attempts of the gateway process that answered this page, over the
        last {rows?.[0]?.health.windowSeconds ? rows[0].health.windowSeconds / 60 : 5} minutes; each process keeps its
        own. A test sends one small request straight to the row, billed to no account.
      </p>
      <ErrorText message={testError} />
      {outcome ? (
        <p class={outcome.ok ? 'notice' : 'error'} role="status" data-testid="row-test-outcome">
          {outcome.text}
        </p>
      ) : null}
      <LoadState error={error} loaded={rows !== undefined} />
      {rows ? (
        <div class="table-wrap">
          <table class="history">
            <caption class="visually-hidden">Provider rows</caption>
            <TableHead
              columns={['Provider row', 'Models', 'Breaker', 'Attempts', 'Error rate', 'p50', 'p95', 'Test']}
            />
            <tbody>
              {rows.map((row) => {
                const id = `${row.providerId}/${row.upstreamModel}`;
                return (
                  <tr key={id}>
                    <td>
                      <code>{id}</code>
                    </td>
                    <td>{row.models.join(', ')}</td>
                    <td>
                      <span class={row.breaker === 'closed' ? 'badge ok' : 'badge warn'}>
                        {breakerLabels[row.breaker]}
                      </span>
                    </td>
                    <td class="number">{row.health.attempts}</td>
                    <td class="number">{(row.health.errorRate * 100).toFixed(1)}%</td>
                    <td class="number">{milliseconds(row.health.p50Ms)}</td>
                    <td class="number">{milliseconds(row.health.p95Ms)}</td>
                    <td>
                      {row.testable ? (
                        <button
                          type="button"
                          disabled={testing !== undefined}
                          onClick={() => test(row)}
                          aria-label={`Test ${id}`}
                        >
                          {testing === id ? 'Testing…' : 'Test'}
                        </button>
                      ) : (
                        <span class="muted">media</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
