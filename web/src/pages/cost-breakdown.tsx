// An execution's cost breakdown: per usage type its quantity, rate, exact cost, where the price
// came from (project price, catalogue, the caller's own cost) and the rule that matched (a tier,
// a condition). Lines with counted=false were computed beside a cost the caller stated.
import { int } from '../format.ts';
import type { CostBreakdownLine, Execution } from '../types.ts';
import { Card, TableScroll } from '../ui.tsx';

const LABEL: Record<string, string> = {
  input: 'Input',
  cache_read: 'Cache read',
  cache_write_5m: 'Cache write (5 min)',
  cache_write_1h: 'Cache write (1 h)',
  input_audio: 'Audio in',
  input_image: 'Image in',
  output: 'Output',
  reasoning: 'Reasoning',
  output_audio: 'Audio out',
  output_image: 'Image out',
  web_search: 'Web search',
  provided: "Caller's cost",
};

const SOURCE: Record<CostBreakdownLine['source'], string> = { project: 'project price', catalogue: 'catalogue', caller: 'caller' };

export function CostBreakdown({ e }: { e: Execution }) {
  const lines = e.cost_breakdown ?? [];
  if (lines.length === 0) return null;
  return (
    <Card title="Cost breakdown" class="cost-breakdown">
      <TableScroll label="Cost breakdown">
        <table class="cost-breakdown" data-cost-breakdown>
          <thead>
            <tr>
              <th>Usage type</th>
              <th class="num">Quantity</th>
              <th class="num">Rate (USD)</th>
              <th class="num">Cost (USD)</th>
              <th>Source</th>
              <th>Rule</th>
            </tr>
          </thead>
          <tbody>
            {lines.map((l) => (
              <tr
                data-usage-type={l.usage_type}
                class={l.counted ? '' : 'muted'}
                title={l.counted ? undefined : 'not counted: the caller stated the cost'}
              >
                <td>{LABEL[l.usage_type] ?? l.usage_type}</td>
                <td class="num">
                  {int(l.quantity)} {l.unit === 'calls' ? 'calls' : ''}
                </td>
                <td class="num mono">{l.rate === null ? '—' : `${l.rate} ${l.unit === 'calls' ? '/ call' : '/ Mtok'}`}</td>
                <td class="num mono">{l.cost_usd}</td>
                <td title={l.price_id ?? undefined}>{SOURCE[l.source]}</td>
                <td class="small">
                  {l.rule}
                  {l.calls > 1 ? ` · ${l.calls} calls` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </Card>
  );
}
