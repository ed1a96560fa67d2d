import { usd } from '../format.ts';
import { capNames, type CapName } from '../types.ts';

export const capLabels: Record<CapName, string> = {
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  total: 'Total',
};

export type CapValues = Record<CapName, string>;

export const noCaps: CapValues = { daily: '', weekly: '', monthly: '', total: '' };

/**
 * The caps as typed, for the API: empty is no cap (null, or left out when creating), a number sets it, 0
 * included ("nothing may be spent"). Throws what is wrong, which the form shows.
 */
export function capsBody(values: CapValues): Record<CapName, number | null> {
  const body: Record<CapName, number | null> = { daily: null, weekly: null, monthly: null, total: null };
  for (const cap of capNames) {
    const typed = values[cap].trim();
    const amount = Number(typed);
    if (typed !== '' && !(Number.isFinite(amount) && amount >= 0))
      throw new Error(`the ${cap} cap must be a number of USD, 0 or more`);
    body[cap] = typed === '' ? null : amount;
  }
  return body;
}

interface CapFieldsProps {
  values: CapValues;
  onChange: (values: CapValues) => void;
  /** What the key already spent in each window: a cap typed below it is flagged before it is saved. */
  spent?: Record<CapName, number>;
}

/** One field per spend cap, each warning when the amount typed is below what the key already spent. */
export function CapFields({ values, onChange, spent }: CapFieldsProps) {
  return (
    <>
      {capNames.map((cap) => {
        const typed = values[cap].trim();
        const already = spent?.[cap] ?? 0;
        const below = typed !== '' && Number.isFinite(Number(typed)) && Number(typed) < already;
        const warningId = `cap-warning-${cap}`;
        return (
          <label key={cap}>
            {capLabels[cap]} cap (USD)
            <input
              type="number"
              inputMode="decimal"
              min={0}
              step="any"
              value={values[cap]}
              aria-describedby={below ? warningId : undefined}
              onInput={(event) => onChange({ ...values, [cap]: event.currentTarget.value })}
            />
            {below ? (
              <span id={warningId} class="warning" role="status">
                Below the {usd(already)} already spent
                {cap === 'total'
                  ? ': every call will be refused.'
                  : ' in this window: calls are refused until it resets.'}
              </span>
            ) : null}
          </label>
        );
      })}
    </>
  );
}
