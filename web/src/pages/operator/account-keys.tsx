import { useState } from 'preact/hooks';
import { request } from '../../api.ts';
import { ErrorText, LoadState, messageOf } from '../../components/feedback.tsx';
import { TableHead } from '../../components/table-head.tsx';
import { usd } from '../../format.ts';
import { capNames, type OperatorKey } from '../../types.ts';
import { useApi } from '../../use-api.ts';
import { RevokeDialog, rateLimitsText } from '../key-dialogs.tsx';

function capsText(key: OperatorKey): string {
  const caps = capNames
    .filter((cap) => key.limits[cap] !== undefined)
    .map((cap) => `${cap} ${usd(key.limits[cap] ?? 0)}`);
  return caps.length === 0 ? 'none' : caps.join(', ');
}

/** The keys of one account, for the operator: caps, limits and spend; disable, enable and revoke. */
export function AccountKeys({ accountId, onChanged }: { accountId: string; onChanged: () => void }) {
  const [version, setVersion] = useState(0);
  const { data: keys, error } = useApi<OperatorKey[]>(
    `/api/operator/v1/accounts/${encodeURIComponent(accountId)}/api-keys`,
    version,
  );
  const [actionError, setActionError] = useState<string>();
  const [revoking, setRevoking] = useState<OperatorKey>();
  const changed = () => {
    setVersion(version + 1);
    onChanged();
  };
  const toggle = async (key: OperatorKey) => {
    setActionError(undefined);
    try {
      await request('PATCH', `/api/operator/v1/api-keys/${encodeURIComponent(key.id)}`, { isActive: !key.isActive });
      changed();
    } catch (caught) {
      setActionError(messageOf(caught));
    }
  };
  return (
    <section aria-labelledby="account-keys-heading">
      <h3 id="account-keys-heading">Keys</h3>
      <LoadState error={error} loaded={keys !== undefined} />
      <ErrorText message={actionError} />
      {keys?.length === 0 ? <p>No keys.</p> : null}
      {keys && keys.length > 0 ? (
        <div class="table-wrap">
          <table class="history">
            <caption class="visually-hidden">Keys of the account</caption>
            <TableHead
              columns={['Name', 'Prefix', 'Status', 'Caps', 'Rate limits', 'Spent today', 'Spent in all', 'Actions']}
            />
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}</code>
                  </td>
                  <td>
                    {key.isActive ? <span class="badge ok">Active</span> : <span class="badge off">Disabled</span>}
                  </td>
                  <td>{capsText(key)}</td>
                  <td>{rateLimitsText(key.rateLimits) ?? "the account's"}</td>
                  <td class="number">{usd(key.spend.daily.spent)}</td>
                  <td class="number">{usd(key.spend.total.spent)}</td>
                  <td>
                    <div class="actions">
                      <button
                        type="button"
                        onClick={() => toggle(key)}
                        aria-label={`${key.isActive ? 'Disable' : 'Enable'} key ${key.name}`}
                      >
                        {key.isActive ? 'Disable' : 'Enable'}
                      </button>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => setRevoking(key)}
                        aria-label={`Revoke key ${key.name}`}
                      >
                        Revoke
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {revoking ? (
        <RevokeDialog
          apiKey={revoking}
          path={`/api/operator/v1/api-keys/${encodeURIComponent(revoking.id)}`}
          onClose={() => setRevoking(undefined)}
          onDone={() => {
            setRevoking(undefined);
            changed();
          }}
        />
      ) : null}
    </section>
  );
}
