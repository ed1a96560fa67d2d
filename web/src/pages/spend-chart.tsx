import { useId, useState } from 'preact/hooks';
import { query } from '../api.ts';
import { Choice } from '../components/choice.tsx';
import { TableHead } from '../components/table-head.tsx';
import { LoadState } from '../components/feedback.tsx';
import { usd } from '../format.ts';
import type { DailySpend } from '../types.ts';
import { useApi } from '../use-api.ts';

const width = 640;
const height = 200;
/** Room left of the bars for the value axis's labels, and under them for the dates. */
const margin = { left: 84, bottom: 22, top: 8 };
const plotWidth = width - margin.left;
const plotBottom = height - margin.bottom;
/** Date labels under the bars: at most this many, evenly spaced, first and last included. */
const dateTicks = 6;
/** Series colours are CSS classes (series-0 … series-7), so the page needs no inline styles under its CSP. */
const palette = 8;
const periods = [7, 30, 90].map((days) => ({ value: days, label: `${days} days` }));

/** A round top for the value axis at or above `max` (1, 2 or 5 times a power of ten), and its ticks. */
export function valueTicks(max: number): number[] {
  if (max <= 0) return [0];
  const magnitude = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate * 4 >= max) ?? max;
  // Multiplied, not summed, so no tick drifts by a float's rounding (0.30000000000000004).
  return [...Array(Math.ceil(max / step) + 1).keys()].map((index) => Number((index * step).toPrecision(12)));
}

/** Which of `count` days get a date label: evenly spaced, the first and the last always. */
export function dateTickIndexes(count: number): number[] {
  if (count <= dateTicks) return [...Array(count).keys()];
  const step = (count - 1) / (dateTicks - 1);
  return [...Array(dateTicks).keys()].map((tick) => Math.round(tick * step));
}

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
  const ticks = valueTicks(max);
  const axisTop = ticks[ticks.length - 1] ?? 0;
  const slot = plotWidth / Math.max(1, dates.length);
  const scale = (amount: number) => (axisTop === 0 ? 0 : (amount / axisTop) * (plotBottom - margin.top));

  return (
    <section class="card" aria-labelledby={titleId}>
      <div class="card-head">
        <h2 id={titleId}>Spend per day</h2>
        <Choice inline label="Period" value={days} options={periods} onChange={setDays} />
      </div>
      <LoadState error={error} loaded={data !== undefined} />
      {data ? (
        <>
          <svg
            class="chart"
            viewBox={`0 0 ${width} ${height}`}
            role="img"
            aria-label={`Spend per UTC day from ${data.from} to ${data.to}: ${usd(total)} in all, over ${models.length} models`}
          >
            {ticks.map((tick) => {
              const y = plotBottom - scale(tick);
              return (
                <g key={tick} class="value-tick">
                  <line class={tick === 0 ? 'axis' : 'grid'} x1={margin.left} y1={y} x2={width} y2={y} />
                  <text x={margin.left - 6} y={y + 4} text-anchor="end">
                    {usd(tick)}
                  </text>
                </g>
              );
            })}
            {dateTickIndexes(dates.length).map((index, tick, shown) => {
              // The first and last labels align with the plot's edges, so neither is cut off.
              const anchor = tick === 0 ? 'start' : tick === shown.length - 1 ? 'end' : 'middle';
              const x = margin.left + index * slot + (anchor === 'start' ? 0 : anchor === 'end' ? slot : slot / 2);
              return (
                <text key={dates[index]} class="date-tick" x={x} y={height - 6} text-anchor={anchor}>
                  {dates[index]?.slice(5)}
                </text>
              );
            })}
            {dates.map((date, index) => {
              let stackTop = plotBottom;
              const dayTotal = totals.get(date) ?? 0;
              return (
                <g key={date} class="day">
                  {/* The whole column answers to the pointer, so a day's total shows over a thin bar too. */}
                  <rect
                    class="day-hit"
                    x={margin.left + index * slot}
                    y={margin.top}
                    width={slot}
                    height={plotBottom - margin.top}
                  >
                    <title>{`${date}: ${usd(dayTotal)}`}</title>
                  </rect>
                  {models.map((model, series) => {
                    const cost = data.spend.find((row) => row.date === date && row.model === model)?.usdCost ?? 0;
                    if (cost === 0) return null;
                    const barHeight = Math.max(1, scale(cost));
                    stackTop -= barHeight;
                    return (
                      <rect
                        key={model}
                        class={`series-${series % palette}`}
                        x={margin.left + index * slot + slot * 0.1}
                        y={stackTop}
                        width={slot * 0.8}
                        height={barHeight}
                      >
                        <title>{`${date} · ${model}: ${usd(cost)} (day: ${usd(dayTotal)})`}</title>
                      </rect>
                    );
                  })}
                </g>
              );
            })}
          </svg>
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
