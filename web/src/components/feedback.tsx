import type { ComponentChildren } from 'preact';

/** An error from the gateway (its envelope's first message), announced to screen readers as it appears. */
export function ErrorText({ message }: { message: string | undefined }) {
  return message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;
}

export function Loading({ children = 'Loading…' }: { children?: ComponentChildren }) {
  return (
    <p class="muted" role="status">
      {children}
    </p>
  );
}

/** Where a read stands: its error, or a loading note until its data comes. */
export function LoadState({ error, loaded }: { error: string | undefined; loaded: boolean }) {
  if (error) return <ErrorText message={error} />;
  return loaded ? null : <Loading />;
}

/** The message of anything thrown by the API client. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
