import { useState } from 'preact/hooks';
import { LoadState } from '../components/feedback.tsx';
import { usd } from '../format.ts';
import type { PricedModel, Prices } from '../types.ts';
import { useApi } from '../use-api.ts';

/** What each price of gateway.yaml is charged for (docs/configuration.md and docs/money.md). */
const priceUnits: Record<string, string> = {
  inputPerMTok: 'per million input tokens',
  outputPerMTok: 'per million output tokens',
  inputPerImage: 'per input image',
  inputPerAudioSecond: 'per second of input audio',
  inputPerVideoSecond: 'per second of input video',
  inputPerFile: 'per input file',
  perImage: 'per image',
  perImageByQuality: 'per image, quality',
  perMCharacters: 'per million characters',
  perVideoSecond: 'per second of video',
  perVideoSecondByResolution: 'per second of video at',
  perAudioSecond: 'per second of audio',
};

function priceLines(pricing: Prices): string[] {
  return Object.entries(pricing).flatMap(([name, price]) => {
    const unit = priceUnits[name] ?? name;
    if (typeof price === 'number') return [`${usd(price)} ${unit}`];
    if (price === undefined) return [];
    return Object.entries(price as Record<string, number | undefined>).flatMap(([tier, amount]) =>
      amount === undefined ? [] : [`${usd(amount)} ${unit} ${tier}`],
    );
  });
}

function constraintText(constraint: unknown): string {
  const shape = constraint as { type?: string; values?: unknown[]; min?: number; max?: number; steps?: number[] };
  switch (shape.type) {
    case 'enum':
      return `one of ${(shape.values ?? []).join(', ')}`;
    case 'range':
      return shape.steps ? `one of ${shape.steps.join(', ')}` : `${shape.min} to ${shape.max}`;
    case 'int':
      return `whole number ${shape.min} to ${shape.max}`;
    case 'bool':
      return 'true or false';
    default:
      return JSON.stringify(constraint);
  }
}

function ConstraintList({ params }: { params: Record<string, unknown> }) {
  return (
    <ul class="plain" aria-label="Parameter constraints">
      {Object.entries(params).map(([name, constraint]) => (
        <li key={name}>
          <code>{name}</code>: {constraintText(constraint)}
        </li>
      ))}
    </ul>
  );
}

function Capabilities({ model }: { model: PricedModel }) {
  const capabilities = model.capabilities;
  if (model.speechParameters)
    return (
      <>
        <p>Parameters checked by its audio route:</p>
        <ConstraintList params={model.speechParameters} />
      </>
    );
  if (!capabilities) return <p class="muted">No parameter constraints: what its surfaces accept is forwarded.</p>;
  const params = { ...capabilities.params, ...capabilities.image?.params, ...capabilities.video?.params };
  return (
    <>
      {capabilities.text?.supportedParameters ? (
        <p>
          Parameters:{' '}
          {capabilities.text.supportedParameters.map((name) => (
            <code key={name}>{name} </code>
          ))}
        </p>
      ) : null}
      {Object.keys(params).length > 0 ? <ConstraintList params={params} /> : null}
      <details>
        <summary>All capabilities</summary>
        <pre class="json">{JSON.stringify(capabilities, null, 2)}</pre>
      </details>
    </>
  );
}

export function CatalogPage() {
  const { data: models, error } = useApi<PricedModel[]>('/api/v1/account/models');
  const [search, setSearch] = useState('');
  const needle = search.trim().toLowerCase();
  const shown = models?.filter(
    (model) =>
      needle === '' ||
      `${model.modelId} ${model.name} ${model.outputModalities.join(' ')}`.toLowerCase().includes(needle),
  );
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Model catalog</h1>
        <label class="inline">
          Search
          <input type="search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} />
        </label>
      </div>
      <p class="muted">
        Send the model id as <code>model</code> on any surface. Prices are in USD.
      </p>
      <LoadState error={error} loaded={models !== undefined} />
      <ul class="cards" aria-label="Models">
        {shown?.map((model) => (
          <li key={model.modelId}>
            <article class="card" aria-labelledby={`model-${model.modelId}`}>
              <div class="card-head">
                <h2 id={`model-${model.modelId}`}>
                  <code>{model.modelId}</code>
                </h2>
                {model.name !== model.modelId ? <span class="muted">{model.name}</span> : null}
              </div>
              <p>
                {model.inputModalities.join(', ')} → {model.outputModalities.join(', ')}
                {model.maxOutputTokens !== undefined
                  ? ` · up to ${model.maxOutputTokens.toLocaleString('en-US')} output tokens`
                  : ''}
              </p>
              {model.pricing ? (
                <ul class="plain prices" aria-label={`Prices of ${model.modelId}`}>
                  {priceLines(model.pricing).map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              ) : (
                <p class="muted">Not priced: calls are refused.</p>
              )}
              <Capabilities model={model} />
            </article>
          </li>
        ))}
      </ul>
      {shown && shown.length === 0 ? <p>No model matches “{search}”.</p> : null}
    </>
  );
}
