import { OperatorAccountsPage } from './operator-accounts.tsx';
import { OperatorAuditPage } from './operator-audit.tsx';
import { OperatorProvidersPage } from './operator-providers.tsx';
import { OperatorUsagePage } from './operator-usage.tsx';

/** The operator console's page at `path`, if any (the app shows this to operator accounts only). */
export function OperatorPage({ path }: { path: string }) {
  if (path === '/operator/accounts') return <OperatorAccountsPage />;
  if (path === '/operator/usage') return <OperatorUsagePage />;
  if (path === '/operator/providers') return <OperatorProvidersPage />;
  if (path === '/operator/audit') return <OperatorAuditPage />;
  return null;
}
