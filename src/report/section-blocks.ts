/** 5-hour blocks (SPEC §7): how the usage limit counts. */
import { median } from '../analyses/repurchase.js';
import { localDayMinute, zoneOffsetMs } from '../format/days.js';
import type { Blocks } from './data.js';
import { fmtInt, fmtTime, fmtUsd } from './format.js';
import { html, sortableTable } from './html.js';
import { maxBy, type ChartSink, type SectionOutput } from './section.js';

export function renderBlocks(d: Blocks, charts: ChartSink): SectionOutput {
  // starts and ends in --timezone, named, as the terminal table shows them; the windows stay UTC hours
  const zone = d.timezone ?? 'UTC';
  const at = (ms: number) => fmtTime(ms, zone);
  // the table's cells, under a caption that names the zone (each cell named it again, as UTC before)
  const clock = (ms: number) => localDayMinute(ms, zone).join(' ');
  const priced = d.blocks.filter((b) => b.usd !== null);
  const top = maxBy(priced, (b) => b.usd!);
  const middle = median(priced.map((b) => b.usd!)) ?? 0;
  const unknown = d.blocks.length - priced.length;
  // a block whose requests all lack a price has no bar: counted, not left out silently
  const notDrawn = unknown > 0 ? ` ${fmtInt(unknown)} ${unknown === 1 ? 'block is not drawn: its cost is' : 'blocks are not drawn: their cost is'} unknown (no price).` : '';
  const reading = top
    ? `${fmtInt(d.blocks.length)} five-hour block${d.blocks.length === 1 ? '' : 's'}; the heaviest started ${at(top.start)} and cost ${fmtUsd(top.usd)} over ${fmtInt(top.requests)} request${top.requests === 1 ? '' : 's'} (median block ${fmtUsd(middle)}).${notDrawn}`
    : d.blocks.length > 0
      ? (d.blocks.length === 1 ? '1 five-hour block, without a priced request: its cost is unknown.' : `${fmtInt(d.blocks.length)} five-hour blocks, none with a priced request: their cost is unknown.`)
      : 'No blocks.';
  // the chart's axis is drawn on a UTC scale (never the browser's zone): each time goes to it as
  // its wall clock in the zone, and the tooltip shows the start as the table writes it
  const wall = (ms: number) => ms + zoneOffsetMs(ms, zone);
  const blocks = priced.map((b) => ({
    start: wall(b.start),
    end: wall(b.end),
    when: at(b.start),
    label: `${at(b.start)} – ${at(b.end)}: ${fmtUsd(b.usd)}, ${fmtInt(b.requests)} request${b.requests === 1 ? '' : 's'}`,
    usd: b.usd,
    requests: b.requests,
    tokens: b.tokens,
  }));
  const table = sortableTable(
    `Cost per 5-hour block (times in ${zone})`,
    [{ label: 'start' }, { label: 'end' }, { label: 'requests', numeric: true }, { label: 'tokens', numeric: true }, { label: 'USD', numeric: true }],
    d.blocks.map((b) => [
      { text: clock(b.start), sort: b.start },
      { text: clock(b.end), sort: b.end },
      { text: fmtInt(b.requests), sort: b.requests },
      { text: fmtInt(b.tokens), sort: b.tokens },
      { text: fmtUsd(b.usd), sort: b.usd },
    ]),
  );
  return { reading, body: html`${charts.figure('blocks', { blocks }, `Cost per 5-hour block (times in ${zone})`, undefined, table)}` };
}
