/**
 * The dashboard's only way to the gateway. The credential is the HttpOnly `gw_session` cookie the browser
 * sends by itself; nothing is kept in localStorage or sessionStorage. State-changing calls echo the
 * `gw_csrf` cookie in `x-csrf-token`, as the gateway requires of cookie-authenticated requests.
 */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function csrfToken(): string | undefined {
  const entry = document.cookie
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith('gw_csrf='));
  return entry === undefined ? undefined : decodeURIComponent(entry.slice('gw_csrf='.length));
}

/** The first message of the gateway's error envelope (`errors[0]`), or a plain description of what came back. */
function errorMessage(status: number, body: unknown): string {
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (Array.isArray(errors) && typeof errors[0] === 'string') return errors[0];
  return `the gateway answered ${status}`;
}

let onSignedOut: () => void = () => undefined;

/** Called when a request answers 401: the session ended (expired, or signed out elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function request<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const token = method === 'GET' ? undefined : csrfToken();
  if (token) headers['x-csrf-token'] = token;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('the gateway cannot be reached', 0);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = new ApiError(errorMessage(response.status, parsed), response.status);
    if (response.status === 401 && !path.startsWith('/api/v1/auth/')) onSignedOut();
    throw error;
  }
  return parsed as T;
}

/** A query string of the defined values. */
export function query(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
