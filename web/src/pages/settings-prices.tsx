// Project prices (USD per million tokens): the project's own rows, which take precedence over the
// built-in catalogue; set one (with per-usage-type rates, tiers and conditions), remove a model's;
// look a model up in the effective table.
import { useState } from 'preact/hooks';
import { api, enc, query } from '../api.ts';
import { fromLocalInput } from '../format.ts';
import type { ModelPrice, Page } from '../types.ts';
import { Badge, Card, ErrorBox, Form, Load, TableScroll, Time, useAction, useApi, Zone } from '../ui.tsx';

/** The per-usage-type rates beyond input, output, cache read and cache write (docs/spend.md, "Prices"). */
const MORE_RATES = [
  ['cache_write_1h_per_mtok', 'Cache write 1 h'],
  ['reasoning_per_mtok', 'Reasoning'],
  ['input_audio_per_mtok', 'Audio in'],
  ['output_audio_per_mtok', 'Audio out'],
  ['input_image_per_mtok', 'Image in'],
  ['output_image_per_mtok', 'Image out'],
  ['web_search_per_call', 'Web search (USD per call)'],
] as const;
type MoreRate = (typeof MORE_RATES)[number][0];

const EMPTY = {
  model: '',
  provider: '',
  match: '',
  input: '',
  output: '',
  cached: '',
  cacheWrite: '',
  effectiveFrom: '',
  tiers: '',
  conditions: '',
  ...(Object.fromEntries(MORE_RATES.map(([k]) => [k, ''])) as Record<MoreRate, string>),
};

/** A JSON array typed into the form, or a readable error naming the field. */
function jsonList(text: string, field: string): unknown[] | undefined {
  if (text.trim() === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${field}: not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(v)) throw new Error(`${field}: must be a JSON array`);
  return v;
}

const TIERS_HINT = '[{"above_input_tokens": 200000, "input_per_mtok": 6, "output_per_mtok": 22.5}]';
const CONDITIONS_HINT = '[{"when": {"service_tier": "batch"}, "input_per_mtok": 1.5, "output_per_mtok": 7.5}]';

function PriceTable({ rows, onRemove }: { rows: ModelPrice[]; onRemove?: (model: string) => void }) {
  return (
    <TableScroll label="Prices">
      <table class="prices">
        <thead>
          <tr>
            <th>Model</th>
            <th>Provider</th>
            <th class="num">Input</th>
            <th class="num">Output</th>
            <th class="num">Cache read</th>
            <th class="num">Cache write</th>
            <th>Other rates, tiers, conditions</th>
            <th>
              From <Zone />
            </th>
            <th>price_id</th>
            {onRemove && <th />}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr data-price-id={r.price_id}>
              <td>
                {r.model}{' '}
                {r.match && (
                  <code class="inline" title="regular expression">
                    {r.match}
                  </code>
                )}{' '}
                {!r.in_force && <Badge>not in force</Badge>}
              </td>
              <td>{r.provider ?? 'any'}</td>
              <td class="num">{r.input_per_mtok}</td>
              <td class="num">{r.output_per_mtok}</td>
              <td class="num">{r.cached_input_per_mtok ?? '—'}</td>
              <td class="num">{r.cache_write_per_mtok ?? '—'}</td>
              <td class="small">
                {MORE_RATES.filter(([k]) => r[k] !== null && r[k] !== undefined)
                  .map(([k, label]) => `${label} ${r[k]}`)
                  .join(' · ')}
                {r.tiers?.length ? (
                  <span title={JSON.stringify(r.tiers)}>
                    <Badge>{r.tiers.length} tier(s)</Badge>
                  </span>
                ) : null}{' '}
                {r.conditions?.length ? (
                  <span title={JSON.stringify(r.conditions)}>
                    <Badge>{r.conditions.length} condition(s)</Badge>
                  </span>
                ) : null}
              </td>
              <td>{r.effective_from ? <Time iso={r.effective_from} bare /> : '—'}</td>
              <td class="mono small">{r.price_id}</td>
              {onRemove && (
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => confirm(`Remove every project price of ${r.model}?`) && onRemove(r.model)}
                  >
                    Remove
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

export function Prices({ p }: { p: string }) {
  const own = useApi<Page<ModelPrice>>(`${p}/models?source=project&limit=1000`);
  const [f, setF] = useState(EMPTY);
  const [lookup, setLookup] = useState('');
  const [q, setQ] = useState('');
  const found = useApi<Page<ModelPrice>>(q ? `${p}/models${query({ q, limit: 20 })}` : null);
  const num = (v: string) => (v.trim() === '' ? undefined : Number(v));
  const save = useAction(async () => {
    const body = {
      input_per_mtok: Number(f.input),
      output_per_mtok: Number(f.output),
      ...(f.provider.trim() ? { provider: f.provider.trim() } : {}),
      ...(f.match.trim() ? { match: f.match.trim() } : {}),
      ...(num(f.cached) !== undefined ? { cached_input_per_mtok: num(f.cached) } : {}),
      ...(num(f.cacheWrite) !== undefined ? { cache_write_per_mtok: num(f.cacheWrite) } : {}),
      ...Object.fromEntries(MORE_RATES.filter(([k]) => num(f[k]) !== undefined).map(([k]) => [k, num(f[k])])),
      ...(jsonList(f.tiers, 'tiers') ? { tiers: jsonList(f.tiers, 'tiers') } : {}),
      ...(jsonList(f.conditions, 'conditions') ? { conditions: jsonList(f.conditions, 'conditions') } : {}),
      ...(f.effectiveFrom ? { effective_from: fromLocalInput(f.effectiveFrom) } : {}),
    };
    await api(`${p}/models/${enc(f.model.trim())}`, { method: 'PUT', body });
    setF(EMPTY);
    own.reload();
  });
  const remove = useAction(async (model: string) => {
    await api(`${p}/models/${enc(model)}`, { method: 'DELETE' });
    own.reload();
  });
  const field = (k: keyof typeof EMPTY) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  return (
    <Card title="Project prices (USD per million tokens)">
      <p class="muted small">
        A project price takes precedence over the built-in catalogue for the model it names; executions it priced carry its price_id.
        Earlier rows stay as history.
      </p>
      <Load state={own}>
        {(page) =>
          page.items.length === 0 ? (
            <p class="muted">No project price: the catalogue prices every call.</p>
          ) : (
            <PriceTable rows={page.items} onRemove={(m) => remove.run(m)} />
          )
        }
      </Load>
      <Form class="form-grid" onSubmit={() => save.run()}>
        <label>
          Model
          <input name="price_model" required value={f.model} onInput={field('model')} placeholder="gpt-4o" />
        </label>
        <label>
          Provider (optional)
          <input name="price_provider" value={f.provider} onInput={field('provider')} placeholder="openai" />
        </label>
        <label>
          Match (optional regex)
          <input name="price_match" value={f.match} onInput={field('match')} placeholder="^gpt-4o-\d{4}" />
        </label>
        <label>
          Input
          <input name="input_per_mtok" type="number" min="0" step="any" required value={f.input} onInput={field('input')} />
        </label>
        <label>
          Output
          <input name="output_per_mtok" type="number" min="0" step="any" required value={f.output} onInput={field('output')} />
        </label>
        <label>
          Cache read
          <input name="cached_input_per_mtok" type="number" min="0" step="any" value={f.cached} onInput={field('cached')} />
        </label>
        <label>
          Cache write
          <input name="cache_write_per_mtok" type="number" min="0" step="any" value={f.cacheWrite} onInput={field('cacheWrite')} />
        </label>
        {MORE_RATES.map(([k, label]) => (
          <label>
            {label}
            <input name={k} type="number" min="0" step="any" value={f[k]} onInput={field(k)} />
          </label>
        ))}
        <label>
          Tiers by input tokens per call (JSON, optional)
          <textarea name="price_tiers" rows={2} value={f.tiers} onInput={field('tiers')} placeholder={TIERS_HINT} />
        </label>
        <label>
          Conditions: service tier, region, batch (JSON, optional)
          <textarea name="price_conditions" rows={2} value={f.conditions} onInput={field('conditions')} placeholder={CONDITIONS_HINT} />
        </label>
        <label>
          <span>
            Effective from <Zone />, optional
          </span>
          <input name="effective_from" type="datetime-local" value={f.effectiveFrom} onInput={field('effectiveFrom')} />
        </label>
        <div>
          <button type="submit" class="primary" disabled={save.busy}>
            Set price
          </button>
        </div>
      </Form>
      <ErrorBox error={save.error ?? remove.error} title="Price not changed" />
      <Form class="inline" onSubmit={() => setQ(lookup.trim())}>
        <input
          type="search"
          name="price_lookup"
          aria-label="Model to look up"
          placeholder="Look up a model's price"
          title="Searches the project's prices and the catalogue"
          value={lookup}
          onInput={(e) => setLookup((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Look up</button>
      </Form>
      {q && (
        <Load state={found}>
          {(page) =>
            page.items.length === 0 ? <p class="muted">No price for a model containing "{q}".</p> : <PriceTable rows={page.items} />
          }
        </Load>
      )}
    </Card>
  );
}
