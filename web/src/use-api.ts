import { useEffect, useState } from 'preact/hooks';
import { request } from './api.ts';
import { messageOf } from './components/feedback.tsx';

/**
 * GETs `path` now and whenever it or `refreshKey` changes. Only the newest request's answer is kept, so a
 * slow answer to an earlier filter never replaces a later one; on an error the last data stays beside it.
 */
export function useApi<T>(path: string, refreshKey: unknown = 0): { data: T | undefined; error: string | undefined } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  useEffect(() => {
    let newest = true;
    request<T>('GET', path).then(
      (data) => {
        if (newest) setState({ data });
      },
      (caught: unknown) => {
        if (newest) setState((previous) => ({ data: previous.data, error: messageOf(caught) }));
      },
    );
    return () => {
      newest = false;
    };
  }, [path, refreshKey]);
  return { data: state.data, error: state.error };
}
