import { useEffect, useRef, useState } from 'preact/hooks';
import { request, whenSignedOut } from './api.ts';
import { ErrorText, Loading, messageOf } from './components/feedback.tsx';
import { usd } from './format.ts';
import { ActivityPage } from './pages/activity.tsx';
import { CatalogPage } from './pages/catalog.tsx';
import { KeysPage } from './pages/keys.tsx';
import { MediaPage } from './pages/media.tsx';
import { OperatorPage } from './pages/operator/operator-page.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { UsagePage } from './pages/usage.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, usePath } from './router.tsx';
import type { Account } from './types.ts';

const sections = [
  { path: '/keys', label: 'API keys' },
  { path: '/usage', label: 'Usage' },
  { path: '/catalog', label: 'Catalog' },
  { path: '/media', label: 'Media' },
  { path: '/activity', label: 'Activity' },
  { path: '/webhooks', label: 'Webhooks' },
] as const;

/** The operator console's pages, shown to operator accounts only. */
const operatorSections = [
  { path: '/operator/accounts', label: 'Accounts' },
  { path: '/operator/usage', label: 'All usage' },
  { path: '/operator/providers', label: 'Providers' },
  { path: '/operator/catalog', label: 'Catalog' },
  { path: '/operator/audit', label: 'Audit log' },
] as const;

const titles: Record<string, string> = {
  '/keys': 'API keys',
  '/usage': 'Usage',
  '/catalog': 'Catalog',
  '/media': 'Media',
  '/activity': 'Activity',
  '/webhooks': 'Webhooks',
  '/sign-in': 'Sign in',
  '/sign-up': 'Create an account',
  '/operator/accounts': 'Accounts · Operator',
  '/operator/usage': 'Usage across accounts · Operator',
  '/operator/providers': 'Providers · Operator',
  '/operator/catalog': 'Catalog and prices · Operator',
  '/operator/audit': 'Audit log · Operator',
};

/** A navigation's links, the current page's marked as such. */
function SectionLinks({ sections, path }: { sections: ReadonlyArray<{ path: string; label: string }>; path: string }) {
  return (
    <ul>
      {sections.map((section) => (
        <li key={section.path}>
          <Link href={section.path} aria-current={path === section.path ? 'page' : undefined}>
            {section.label}
          </Link>
        </li>
      ))}
    </ul>
  );
}

export function App() {
  const path = usePath();
  /** undefined while the first answer is awaited; null when signed out. */
  const [account, setAccount] = useState<Account | null>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  /** The page whose heading last took focus: a first load focuses nothing, only a move to another page does. */
  const focusedPath = useRef<string | undefined>(undefined);
  const wasSignedIn = useRef(false);
  wasSignedIn.current = Boolean(account);

  const refreshAccount = async () => {
    try {
      setAccount(await request<Account>('GET', '/api/v1/account'));
      setError(undefined);
    } catch (caught) {
      if ((caught as { status?: number }).status === 401) setAccount(null);
      else setError(messageOf(caught));
    }
  };

  useEffect(() => {
    whenSignedOut(() => {
      // A first visit without a session is no news; a session that ends under the user is.
      if (wasSignedIn.current) setNotice('Your session ended: sign in again.');
      setAccount(null);
    });
  }, []);

  // The balance follows every page change, so a call made elsewhere shows up on the next click.
  useEffect(() => {
    void refreshAccount();
  }, [path]);

  useEffect(() => {
    document.title = `${titles[path] ?? 'Dashboard'} · Model gateway`;
    // Keyboard and screen-reader users land on the new page's heading rather than the top of the document. The
    // first page of a visit keeps the browser's own focus, so nothing is ringed before the user does anything.
    if (account === undefined) return;
    // A redirect from a path that is no page ("/" to the sign-in page) is not a move the user made.
    const from = focusedPath.current;
    if (from !== undefined && from !== path && titles[from]) document.querySelector<HTMLElement>('main h1')?.focus();
    focusedPath.current = path;
  }, [path, account === undefined]);

  useEffect(() => {
    if (account === null && path !== '/sign-in' && path !== '/sign-up') navigate('/sign-in', { replace: true });
    const closed = account?.role !== 'operator' && path.startsWith('/operator/');
    if (account && (path === '/' || path === '/sign-in' || path === '/sign-up' || !titles[path] || closed))
      navigate('/keys', { replace: true });
  }, [account, path]);

  if (account === undefined) return error ? <ErrorText message={error} /> : <Loading />;
  if (account === null) {
    return (
      <SignInPage
        // A page of its own per mode: what was typed, or refused, on one form does not carry over to the other.
        key={path === '/sign-up' ? 'sign-up' : 'sign-in'}
        mode={path === '/sign-up' ? 'sign-up' : 'sign-in'}
        notice={notice}
        onSignedIn={(signedIn) => {
          setNotice(undefined);
          setAccount(signedIn);
          navigate('/keys');
        }}
      />
    );
  }

  const signOut = async () => {
    try {
      await request('POST', '/api/v1/auth/logout');
      setNotice('You are signed out.');
      setAccount(null);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Model gateway</span>
        <nav aria-label="Sections">
          <SectionLinks sections={sections} path={path} />
        </nav>
        {account.role === 'operator' ? (
          <nav aria-label="Operator" class="operator-nav">
            <span class="muted" aria-hidden="true">
              Operator
            </span>
            <SectionLinks sections={operatorSections} path={path} />
          </nav>
        ) : null}
        <div class="who">
          <span>
            Balance <strong data-testid="balance">{usd(account.creditBalance)}</strong>
          </span>
          <span class="muted email">{account.email}</span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <ErrorText message={error} />
        {path === '/keys' ? <KeysPage onChanged={refreshAccount} /> : null}
        {path === '/usage' ? <UsagePage onChanged={refreshAccount} /> : null}
        {path === '/catalog' ? <CatalogPage /> : null}
        {path === '/media' ? <MediaPage /> : null}
        {path === '/activity' ? <ActivityPage /> : null}
        {path === '/webhooks' ? <WebhooksPage /> : null}
        {account.role === 'operator' ? <OperatorPage path={path} /> : null}
      </main>
    </>
  );
}
