import { useId, useState } from 'preact/hooks';
import { query } from '../api.ts';
import { Choice } from '../components/choice.tsx';
import { TableHead } from '../components/table-head.tsx';
import { LoadState } from '../components/feedback.tsx';
import { usd } from '../format.ts';
import type { DailySpend } from '../types.ts';
import { useApi } from '../use-api.ts';

const width = 640;
const height = 180;
/** The highest day's bar reaches this line, under which the scale's label sits. */
const top = 4;
/** Series colours are CSS classes (series-0 … series-7), so the page needs no inline styles under its CSP. */
const palette = 8;
const periods = [7, 30, 90].map((days) => ({ value: days, label: `${days} days` }));

function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = Date.parse(`${from}T00:00:00Z`); day <= Date.parse(`${to}T00:00:00Z`); day += 86_400_000)
    days.push(new Date(day).toISOString().slice(0, 10));
  return days;
}

/** Spend per UTC day, stacked by model: an SVG drawn here, with the numbers in a table for screen readers. */
export function SpendChart({ refreshKey }: { refreshKey: number }) {
  const [days, setDays] = useState(30);
  const { data, error } = useApi<DailySpend>(`/api/v1/usage/daily${query({ days })}`, refreshKey);
  const titleId = useId();

  const models = data ? [...new Set(data.spend.map((row) => row.model))].sort() : [];
  const dates = data ? daysBetween(data.from, data.to) : [];
  const totals = new Map<string, number>();
  for (const row of data?.spend ?? []) totals.set(row.date, (totals.get(row.date) ?? 0) + row.usdCost);
  const max = Math.max(0, ...totals.values());
  const total = [...totals.values()].reduce((sum, value) => sum + value, 0);
  const slot = width / Math.max(1, dates.length);
  const scale = (amount: number) => (max === 0 ? 0 : (amount / max) * (height - top));

  return (
    <section class="card" aria-labelledby={titleId}>
      <div class="card-head">
        <h2 id={titleId}>Spend per day</h2>
        <Choice inline label="Period" value={days} options={periods} onChange={setDays} />
      </div>
      <LoadState error={error} loaded={data !== undefined} />
      {data ? (
        <>
          <p class="chart-scale muted" aria-hidden="true">
            {max === 0 ? '' : `Highest day: ${usd(max)}`}
          </p>
          <svg
            class="chart"
            viewBox={`0 0 ${width} ${height}`}
            role="img"
            aria-label={`Spend per UTC day from ${data.from} to ${data.to}: ${usd(total)} in all, over ${models.length} models`}
          >
            <line class="axis" x1={0} y1={height} x2={width} y2={height} />
            {max === 0 ? null : <line class="axis" x1={0} y1={top} x2={width} y2={top} stroke-dasharray="4 4" />}
            {dates.map((date, index) => {
              let stackTop = height;
              return models.map((model, series) => {
                const cost = data.spend.find((row) => row.date === date && row.model === model)?.usdCost ?? 0;
                if (cost === 0) return null;
                const barHeight = Math.max(1, scale(cost));
                stackTop -= barHeight;
                return (
                  <rect
                    key={`${date}-${model}`}
                    class={`series-${series % palette}`}
                    x={index * slot + slot * 0.1}
                    y={stackTop}
                    width={slot * 0.8}
                    height={barHeight}
                  >
                    <title>{`${date} · ${model}: ${usd(cost)}`}</title>
                  </rect>
                );
              });
            })}
          </svg>
          <p class="chart-scale muted" aria-hidden="true">
            <span>{data.from}</span>
            <span>{data.to}</span>
          </p>
          {models.length === 0 ? <p class="muted">Nothing was spent in this period.</p> : null}
          <ul class="legend" aria-label="Models">
            {models.map((model, series) => (
              <li key={model}>
                <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
                  <rect class={`series-${series % palette}`} width="10" height="10" />
                </svg>
                {model}
              </li>
            ))}
          </ul>
          <details>
            <summary>The numbers</summary>
            <div class="table-wrap">
              <table>
                <TableHead columns={['Day (UTC)', 'Model', 'Calls', 'Spend']} />
                <tbody>
                  {data.spend.map((row) => (
                    <tr key={`${row.date}-${row.model}`}>
                      <td>{row.date}</td>
                      <td>{row.model}</td>
                      <td>{row.generations}</td>
                      <td>{usd(row.usdCost)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      ) : null}
    </section>
  );
}
