import { useState } from 'preact/hooks';
import { query, request } from '../../api.ts';
import { ErrorText, LoadState, messageOf } from '../../components/feedback.tsx';
import { FormDialog } from '../../components/form-dialog.tsx';
import { Pager } from '../../components/pager.tsx';
import { TableHead } from '../../components/table-head.tsx';
import { dateTime, usd } from '../../format.ts';
import type { OperatorAccount, OperatorAccountDetail, Page } from '../../types.ts';
import { useApi } from '../../use-api.ts';
import { AccountKeys } from './account-keys.tsx';

const pageSize = 20;

/** The operator's accounts: search by email, then open one to credit, disable, or look after its keys. */
export function OperatorAccountsPage() {
  const [typed, setTyped] = useState('');
  const [email, setEmail] = useState('');
  const [offset, setOffset] = useState(0);
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<string>();
  const { data: page, error } = useApi<Page<OperatorAccount>>(
    `/api/operator/v1/accounts${query({ email, offset, limit: pageSize })}`,
    version,
  );
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Accounts</h1>
      </div>
      <form
        class="filters"
        aria-label="Search accounts"
        onSubmit={(event) => {
          event.preventDefault();
          setEmail(typed.trim());
          setOffset(0);
        }}
      >
        <label>
          Search by email
          <input type="search" value={typed} onInput={(event) => setTyped(event.currentTarget.value)} />
        </label>
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <LoadState error={error} loaded={page !== undefined} />
      {page ? (
        <>
          <div class="table-wrap">
            <table class="history">
              <caption class="visually-hidden">Accounts, oldest first</caption>
              <TableHead
                columns={[
                  'Email',
                  'Role',
                  'Balance',
                  'Keys',
                  'Status',
                  'Created',
                  <span class="visually-hidden">Open</span>,
                ]}
              />
              <tbody>
                {page.results.map((account) => (
                  <tr key={account.id}>
                    <td>{account.email}</td>
                    <td>{account.role}</td>
                    <td class="number">{usd(account.creditBalance)}</td>
                    <td class="number">{account.keyCount}</td>
                    <td>
                      {account.disabled ? (
                        <span class="badge off">Disabled</span>
                      ) : (
                        <span class="badge ok">Active</span>
                      )}
                    </td>
                    <td>{dateTime(account.createdAt)}</td>
                    <td>
                      <button type="button" onClick={() => setOpen(account.id)} aria-label={`Open ${account.email}`}>
                        Open
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.total === 0 ? <p>No account matches.</p> : null}
          <Pager
            offset={page.offset}
            limit={page.limit}
            total={page.total}
            onOffset={setOffset}
            label="Account pages"
          />
        </>
      ) : null}
      {open ? <AccountPanel key={open} accountId={open} onChanged={() => setVersion(version + 1)} /> : null}
    </>
  );
}

/** One account: its figures, a credit grant or removal with its reason, its password, disable or enable, and its keys. */
function AccountPanel({ accountId, onChanged }: { accountId: string; onChanged: () => void }) {
  const [version, setVersion] = useState(0);
  const { data: account, error } = useApi<OperatorAccountDetail>(
    `/api/operator/v1/accounts/${encodeURIComponent(accountId)}`,
    version,
  );
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [actionError, setActionError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [settingPassword, setSettingPassword] = useState(false);

  const act = async (run: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setActionError(undefined);
    setNotice(undefined);
    try {
      await run();
      setNotice(done);
      setVersion(version + 1);
      onChanged();
    } catch (caught) {
      setActionError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  const credit = (event: Event) => {
    event.preventDefault();
    const value = Number(amount);
    void act(
      async () => {
        await request('POST', `/api/operator/v1/accounts/${encodeURIComponent(accountId)}/credits`, {
          amount: value,
          reason,
        });
        setAmount('');
        setReason('');
      },
      `${value < 0 ? 'Removed' : 'Granted'} ${usd(Math.abs(value))}.`,
    );
  };

  return (
    <section class="card" aria-labelledby="account-heading">
      <LoadState error={error} loaded={account !== undefined} />
      {account ? (
        <>
          <h2 id="account-heading" tabIndex={-1}>
            {account.email}
          </h2>
          <dl class="fields">
            <dt>Balance</dt>
            <dd data-testid="operator-balance">{usd(account.creditBalance)}</dd>
            <dt>Held for requests under way</dt>
            <dd>{usd(account.held)}</dd>
            <dt>Spent</dt>
            <dd>
              {usd(account.spent)} over {account.generations} records
            </dd>
            <dt>Role</dt>
            <dd>{account.role}</dd>
            <dt>Status</dt>
            <dd>{account.disabled ? 'Disabled: its keys and sessions are refused' : 'Active'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{account.id}</code>
            </dd>
          </dl>
          <form class="filters" onSubmit={credit} aria-label="Grant or remove credit">
            <label>
              Amount in USD (negative removes)
              <input
                type="number"
                step="any"
                required
                value={amount}
                onInput={(event) => setAmount(event.currentTarget.value)}
              />
            </label>
            <label>
              Reason
              <input
                required
                maxLength={500}
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </label>
            <div class="actions">
              <button type="submit" class="primary" disabled={busy}>
                Apply credit
              </button>
            </div>
          </form>
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => setSettingPassword(true)}>
              Set password
            </button>
            {account.disabled ? (
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  act(
                    () => request('POST', `/api/operator/v1/accounts/${encodeURIComponent(accountId)}/enable`),
                    'The account is enabled.',
                  )
                }
              >
                Enable account
              </button>
            ) : (
              <button
                type="button"
                class="danger"
                disabled={busy}
                onClick={() =>
                  act(
                    () => request('POST', `/api/operator/v1/accounts/${encodeURIComponent(accountId)}/disable`),
                    'The account is disabled: its keys and sessions are refused everywhere.',
                  )
                }
              >
                Disable account
              </button>
            )}
          </div>
          <ErrorText message={actionError} />
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          {settingPassword ? (
            <PasswordDialog
              accountId={accountId}
              email={account.email}
              onClose={() => setSettingPassword(false)}
              onSet={() => {
                setSettingPassword(false);
                setActionError(undefined);
                setNotice("The password is set: the account's sessions ended, its keys keep working.");
              }}
            />
          ) : null}
          <AccountKeys accountId={accountId} onChanged={() => setVersion(version + 1)} />
        </>
      ) : null}
    </section>
  );
}

/** A new password for the account (signup's rules): its sessions end, and it can sign in with it. */
function PasswordDialog({
  accountId,
  email,
  onClose,
  onSet,
}: {
  accountId: string;
  email: string;
  onClose: () => void;
  onSet: () => void;
}) {
  const [password, setPassword] = useState('');
  return (
    <FormDialog
      title={`Set the password of ${email}`}
      submitLabel="Set password"
      onClose={onClose}
      action={async () => {
        await request('PUT', `/api/operator/v1/accounts/${encodeURIComponent(accountId)}/password`, { password });
        onSet();
      }}
    >
      <p>Its sessions end at once; its API keys keep working. Tell the account holder the password another way.</p>
      <label>
        New password (8 to 256 characters)
        <input
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={256}
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
      </label>
    </FormDialog>
  );
}
