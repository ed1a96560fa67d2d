import { useState } from 'preact/hooks';
import { request } from '../../api.ts';
import { ErrorText, LoadState, messageOf } from '../../components/feedback.tsx';
import { TableHead } from '../../components/table-head.tsx';
import type { CatalogModel } from '../../types.ts';
import { useApi } from '../../use-api.ts';
import { EditEntryDialog, EditPricesDialog, PriceHistoryDialog, RevertDialog } from './catalog-dialogs.tsx';
import { modelPath, pricesText } from './price-fields.ts';

const catalogApi = '/api/operator/v1/catalog';

type Opened = { kind: 'prices' | 'entry' | 'history' | 'revert'; model: CatalogModel };

const hasOverride = (model: CatalogModel) => model.overrides.entry || model.overrides.pricing || model.overrides.active;

/**
 * The catalog and its prices (docs/runtime-catalog.md): every model as it serves, where it comes from, its prices
 * and price version; prices edited, models switched off and on, entries edited as JSON, runtime changes reverted
 * to gateway.yaml, and each model's price history.
 */
export function OperatorCatalogPage() {
  const [version, setVersion] = useState(0);
  const { data, error } = useApi<{ results: CatalogModel[] }>(`${catalogApi}/models`, version);
  const [opened, setOpened] = useState<Opened>();
  const [notice, setNotice] = useState<string>();
  const [actionError, setActionError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const changed = (text: string) => {
    setNotice(text);
    setActionError(undefined);
    setVersion((current) => current + 1);
  };
  const saved = (model: CatalogModel) => {
    setOpened(undefined);
    changed(`${model.id} saved: price version ${model.priceVersion ?? 'none'}.`);
  };
  const act = async (work: () => Promise<string>) => {
    setBusy(true);
    setNotice(undefined);
    setActionError(undefined);
    try {
      changed(await work());
    } catch (caught) {
      setActionError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (model: CatalogModel) =>
    act(async () => {
      const path = `${catalogApi}/${model.active ? 'disable' : 'enable'}/${modelPath(model.id)}`;
      const answer = await request<CatalogModel>('POST', path);
      return `${answer.id} ${answer.active ? 'enabled' : 'disabled'}.`;
    });
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Catalog and prices</h1>
        <button type="button" onClick={() => setVersion(version + 1)}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Changes here are stored in the database over gateway.yaml and reach every gateway process within a second. A new
        price gets a new price version; each usage record names the version it was charged at.
      </p>
      <ErrorText message={actionError} />
      {notice ? (
        <p class="notice" role="status" data-testid="catalog-notice">
          {notice}
        </p>
      ) : null}
      <LoadState error={error} loaded={data !== undefined} />
      {data ? (
        <div class="table-wrap">
          <table class="history">
            <caption class="visually-hidden">Catalog models</caption>
            <TableHead columns={['Model', 'Name', 'Source', 'Active', 'Prices', 'Price version', 'Actions']} />
            <tbody>
              {data.results.map((model) => (
                <tr key={model.id} data-model={model.id}>
                  <td>
                    <code>{model.id}</code>
                  </td>
                  <td>{model.entry.name ?? '—'}</td>
                  <td>{model.source === 'file' ? 'gateway.yaml' : 'runtime'}</td>
                  <td>
                    <span class={model.served ? 'badge ok' : 'badge warn'}>
                      {model.active ? (model.served ? 'Active' : 'On, no provider') : 'Disabled'}
                    </span>
                  </td>
                  <td>{pricesText(model.entry.pricing)}</td>
                  <td>
                    <code>{model.priceVersion ?? '—'}</code>
                  </td>
                  <td>
                    <div class="actions">
                      <button
                        type="button"
                        onClick={() => setOpened({ kind: 'prices', model })}
                        aria-label={`Edit prices of ${model.id}`}
                      >
                        Edit prices
                      </button>
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => toggle(model)}
                        aria-label={`${model.active ? 'Disable' : 'Enable'} ${model.id}`}
                      >
                        {model.active ? 'Disable' : 'Enable'}
                      </button>
                      <button
                        type="button"
                        onClick={() => setOpened({ kind: 'history', model })}
                        aria-label={`Price history of ${model.id}`}
                      >
                        History
                      </button>
                      <button
                        type="button"
                        onClick={() => setOpened({ kind: 'entry', model })}
                        aria-label={`Edit entry of ${model.id} as JSON`}
                      >
                        Edit JSON
                      </button>
                      {hasOverride(model) ? (
                        <button
                          type="button"
                          class="danger"
                          onClick={() => setOpened({ kind: 'revert', model })}
                          aria-label={`Delete runtime changes of ${model.id}`}
                        >
                          Revert
                        </button>
                      ) : null}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {opened?.kind === 'prices' ? (
        <EditPricesDialog model={opened.model} onClose={() => setOpened(undefined)} onSaved={saved} />
      ) : null}
      {opened?.kind === 'entry' ? (
        <EditEntryDialog model={opened.model} onClose={() => setOpened(undefined)} onSaved={saved} />
      ) : null}
      {opened?.kind === 'revert' ? (
        <RevertDialog
          model={opened.model}
          onClose={() => setOpened(undefined)}
          onDone={() => {
            setOpened(undefined);
            changed(`${opened.model.id}: runtime changes deleted.`);
          }}
        />
      ) : null}
      {opened?.kind === 'history' ? (
        <PriceHistoryDialog model={opened.model} onClose={() => setOpened(undefined)} />
      ) : null}
    </>
  );
}
