import { useState } from 'preact/hooks';
import { request } from '../../api.ts';
import { Dialog } from '../../components/dialog.tsx';
import { LoadState } from '../../components/feedback.tsx';
import { FormDialog } from '../../components/form-dialog.tsx';
import { TableHead } from '../../components/table-head.tsx';
import { dateTime } from '../../format.ts';
import type { CatalogModel, Page, PriceVersion } from '../../types.ts';
import { useApi } from '../../use-api.ts';
import { modelPath, priceFields, pricesText, pricingBody } from './price-fields.ts';

const catalogApi = '/api/operator/v1/catalog';

interface ModelDialogProps {
  model: CatalogModel;
  onClose: () => void;
  /** Called with the model as the gateway answers it after the change. */
  onSaved: (model: CatalogModel) => void;
}

/** A field for each price kind the model uses; a value the gateway refuses shows its 400 message. */
export function EditPricesDialog({ model, onClose, onSaved }: ModelDialogProps) {
  const fields = priceFields(model.entry.pricing);
  const [texts, setTexts] = useState<Record<string, string>>(
    Object.fromEntries(fields.map((field) => [field.path, String(field.value)])),
  );
  return (
    <FormDialog
      title={`Prices of ${model.id}`}
      submitLabel="Save prices"
      onClose={onClose}
      action={async () =>
        onSaved(await request<CatalogModel>('PUT', `${catalogApi}/prices/${modelPath(model.id)}`, pricingBody(texts)))
      }
    >
      {fields.length === 0 ? (
        <p class="muted">This model has no prices: give it some through “Edit entry as JSON”.</p>
      ) : null}
      {fields.map((field) => (
        <label key={field.path}>
          {field.label}
          <input
            type="number"
            step="any"
            name={field.path}
            value={texts[field.path] ?? ''}
            onInput={(event) => setTexts({ ...texts, [field.path]: event.currentTarget.value })}
          />
        </label>
      ))}
      <p class="muted">
        The next request in every gateway process is charged at the new prices, as a new price version.
      </p>
    </FormDialog>
  );
}

/** The whole model entry in gateway.yaml's shape, as JSON, for changes the other actions do not cover. */
export function EditEntryDialog({ model, onClose, onSaved }: ModelDialogProps) {
  const [text, setText] = useState(JSON.stringify(model.entry, null, 2));
  const save = async () => {
    let entry: unknown;
    try {
      entry = JSON.parse(text);
    } catch (caught) {
      throw new Error(`the entry is not JSON: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
    onSaved(await request<CatalogModel>('PUT', `${catalogApi}/models/${modelPath(model.id)}`, entry));
  };
  return (
    <FormDialog title={`Entry of ${model.id}`} submitLabel="Save entry" onClose={onClose} action={save}>
      <label>
        Model entry (JSON, as in gateway.yaml's models)
        <textarea
          name="entry"
          rows={18}
          spellcheck={false}
          class="code"
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
        />
      </label>
      <p class="muted">
        Saved as a runtime entry that replaces gateway.yaml's until it is reverted. Its id must stay {model.id}.
      </p>
    </FormDialog>
  );
}

/** Every price version of a model, newest first: when, from where, by whom, and which is charged now. */
export function PriceHistoryDialog({ model, onClose }: { model: CatalogModel; onClose: () => void }) {
  const { data, error } = useApi<Page<PriceVersion>>(`${catalogApi}/prices/${modelPath(model.id)}?limit=100`);
  return (
    <Dialog title={`Price history of ${model.id}`} onClose={onClose} closeButton>
      <LoadState error={error} loaded={data !== undefined} />
      {data ? (
        <div class="table-wrap">
          <table class="history" data-testid="price-history">
            <caption class="visually-hidden">Price versions of {model.id}, newest first</caption>
            <TableHead columns={['Version', 'Date', 'Source', 'Set by', 'Prices']} />
            <tbody>
              {data.results.map((version) => (
                <tr key={version.id}>
                  <td>
                    <code>{version.id}</code>
                    {version.current ? <span class="badge ok">charged now</span> : null}
                  </td>
                  <td>{dateTime(version.createdAt)}</td>
                  <td>{version.source === 'file' ? 'gateway.yaml' : 'runtime'}</td>
                  <td>{version.actor ?? '—'}</td>
                  <td>{pricesText(version.pricing)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.total > data.results.length ? (
            <p class="muted">
              The {data.results.length} newest of {data.total} versions.
            </p>
          ) : null}
        </div>
      ) : null}
    </Dialog>
  );
}

/** Deleting a model's runtime entry, prices and switch, after saying what serves instead. */
export function RevertDialog({
  model,
  onClose,
  onDone,
}: {
  model: CatalogModel;
  onClose: () => void;
  onDone: () => void;
}) {
  return (
    <FormDialog
      title={`Delete the runtime changes of ${model.id}`}
      submitLabel="Delete runtime changes"
      onClose={onClose}
      action={async () => {
        await request<undefined>('DELETE', `${catalogApi}/models/${modelPath(model.id)}`);
        onDone();
      }}
    >
      <p>
        {model.inFile
          ? "gateway.yaml's entry serves again in every process, its prices as a new price version."
          : 'gateway.yaml has no entry for this model: it leaves the catalog.'}
      </p>
    </FormDialog>
  );
}
