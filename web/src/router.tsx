import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** A client-side route change: the gateway answers index.html for every page path, so a reload lands on the same page. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const follow = () => setPath(location.pathname);
    addEventListener('popstate', follow);
    return () => removeEventListener('popstate', follow);
  }, []);
  return path;
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  'aria-current'?: 'page';
}

/** A real link (it opens in a new tab with a modifier key), followed in place otherwise. */
export function Link({ href, children, 'aria-current': current }: LinkProps) {
  const follow = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={follow} aria-current={current}>
      {children}
    </a>
  );
}
