/** 5-hour blocks (SPEC §7): how the usage limit counts. */
import { median } from '../analyses/repurchase.js';
import { localDayMinute, zoneOffsetMs } from '../format/days.js';
import type { Blocks } from './data.js';
import { fmtCount, fmtInt, fmtTime, fmtUsd, leftOutMark } from './format.js';
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
  // the median of blocks some of which leave requests without a price out (or of the priced blocks alone, those
  // without any price not drawn) is no whole figure either: +?, as those blocks' costs are marked
  const middleMark = unknown > 0 || priced.some((b) => (b.unpricedRequests ?? 0) > 0) ? ' +?' : '';
  // a block whose requests all lack a price has no bar: counted, not left out silently
  const notDrawn = unknown > 0 ? ` ${fmtInt(unknown)} ${unknown === 1 ? 'block is not drawn: its cost is' : 'blocks are not drawn: their cost is'} unknown (no price).` : '';
  const reading = top
    ? `${fmtInt(d.blocks.length)} five-hour block${d.blocks.length === 1 ? '' : 's'}; the heaviest started ${at(top.start)} and cost ${fmtUsd(top.usd)}${leftOutMark(top.usd, top.unpricedRequests)} over ${fmtInt(top.requests)} request${top.requests === 1 ? '' : 's'} (median block ${fmtUsd(middle)}${middleMark}).${notDrawn}`
    : d.blocks.length > 0
      ? (d.blocks.length === 1 ? '1 five-hour block, without a priced request: its cost is unknown.' : `${fmtInt(d.blocks.length)} five-hour blocks, none with a priced request: their cost is unknown.`)
      : 'No blocks.';
  // the chart's axis is in instants, on a UTC scale (never the browser's zone), its ticks and labels
  // on the clocks of the zone (the page's zoneTicks, zoneOffset): a bar is its block's 5 hours, and
  // blocks that follow each other touch across a change of the clocks too (drawn from the wall clock,
  // a block before the spring change left an hour's gap, one before the autumn change overlapped the
  // next by an hour). The tooltip shows start and end as the table writes them, the end saying what
  // the clocks did.
  const blocks = priced.map((b) => {
    const until = `${at(b.end)}${clocksChanged(b.start, b.end, zone)}`;
    return {
      start: b.start,
      end: b.end,
      when: at(b.start),
      until,
      label: `${at(b.start)} – ${until}: ${fmtUsd(b.usd)}${leftOutMark(b.usd, b.unpricedRequests)}, ${fmtInt(b.requests)} request${b.requests === 1 ? '' : 's'}`,
      usd: b.usd,
      // the tooltip's USD, as the table writes it
      usdText: fmtUsd(b.usd) + leftOutMark(b.usd, b.unpricedRequests),
      requests: b.requests,
      tokens: b.tokens,
    };
  });
  const table = sortableTable(
    `Cost per 5-hour block (times in ${zone})`,
    [{ label: 'start' }, { label: 'end' }, { label: 'requests', numeric: true }, { label: 'tokens', numeric: true }, { label: 'USD', numeric: true }],
    d.blocks.map((b) => [
      { text: clock(b.start), sort: b.start },
      { text: clock(b.end), sort: b.end },
      { text: fmtInt(b.requests), sort: b.requests },
      { text: fmtInt(b.tokens), sort: b.tokens },
      // +? where the block's priced cost leaves requests without a price out, as `blocks` marks it
      { text: fmtUsd(b.usd) + leftOutMark(b.usd, b.unpricedRequests), sort: b.usd },
    ]),
  );
  return { reading, body: html`${charts.figure('blocks', { blocks }, `Cost per 5-hour block (times in ${zone})`, undefined, table, { zone })}` };
}

/**
 * What the clocks of `zone` did between two instants, for a block's end: '' when nothing; else the
 * shift and the hours on the wall clock against the hours that passed.
 * Example: a block from 2026-03-08 05:00 to 10:00 UTC in America/New_York (00:00 EST to 06:00 EDT)
 * → ' (the clocks went forward 1 hour: 5 hours, 6 on the wall clock)'.
 */
export function clocksChanged(start: number, end: number, zone: string): string {
  const shift = zoneOffsetMs(end, zone) - zoneOffsetMs(start, zone);
  if (shift === 0) return '';
  const minutes = Math.abs(shift) / 60_000;
  const by = minutes % 60 === 0 ? fmtCount(minutes / 60, 'hour') : fmtCount(minutes, 'minute');
  const hours = (ms: number) => String(Math.round(ms / 36_000) / 100);
  return ` (the clocks went ${shift > 0 ? 'forward' : 'back'} ${by}: ${hours(end - start)} hours, ${hours(end - start + shift)} on the wall clock)`;
}
