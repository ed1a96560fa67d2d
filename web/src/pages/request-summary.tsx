/** How the usage record's recorded request reads to the person who sent it: the route called, then each field. */

import { Fragment } from 'preact';

/** The route a recorded request was sent to, from the surface and endpoint the gateway records. */
export function sentTo(request: Record<string, unknown>): string | undefined {
  const { surface, endpoint, model } = request;
  if (typeof surface !== 'string') return undefined;
  const path = typeof endpoint === 'string' ? endpoint : '';
  switch (surface) {
    case 'alpha':
      return `/api/alpha/v1/${path}`;
    case 'beta':
      return `/api/beta/v1/${path}`;
    case 'gamma':
      return `/api/gamma/v1beta/models/${typeof model === 'string' ? model : '…'}:${path}`;
    case 'native':
      return `/api/v1/${path || 'text/completions'}`;
    default:
      return `${surface} ${path}`.trim();
  }
}

/** Field names as a person reads them ("maxTokens" -> "max tokens"). */
function spoken(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

function valueText(name: string, value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number' && (name === 'messages' || name === 'inputs')) return `${value}`;
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value))
    return value
      .map((item) =>
        typeof item === 'object' && item !== null && 'text' in item && typeof item.text === 'string'
          ? item.text
          : typeof item === 'object' && item !== null && 'type' in item
            ? `[${String(item.type)}]`
            : JSON.stringify(item),
      )
      .join(' ');
  return JSON.stringify(value);
}

/** The recorded request as a list: where it went, then its fields in the words of the request. */
export function RequestSummary({ request }: { request: Record<string, unknown> }) {
  const route = sentTo(request);
  const fields = Object.entries(request).filter(
    ([name, value]) => value !== undefined && value !== null && name !== 'surface' && name !== 'endpoint',
  );
  return (
    <>
      <dl class="fields" data-testid="request-summary">
        {route ? (
          <>
            <dt>Sent to</dt>
            <dd>
              <code>{route}</code>
            </dd>
          </>
        ) : null}
        {fields.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{spoken(name)}</dt>
            <dd>{valueText(name, value)}</dd>
          </Fragment>
        ))}
      </dl>
      <details>
        <summary>As recorded (JSON)</summary>
        <pre class="json">{JSON.stringify(request, null, 2)}</pre>
      </details>
    </>
  );
}

/** The recorded request as an object of fields, when it is one (the record's `request` is free-form). */
export function requestFields(request: unknown): Record<string, unknown> | undefined {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return undefined;
  return Object.fromEntries(Object.entries(request));
}
