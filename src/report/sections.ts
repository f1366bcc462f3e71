/** The report's sections, in page order: which ReportData key, which renderer. */
import type { ReportData } from './data.js';
import type { ChartSink, SectionOutput } from './section.js';
import { renderAnatomy } from './section-anatomy.js';
import { renderBlocks } from './section-blocks.js';
import { renderTopChains } from './section-chains.js';
import { renderCostBy } from './section-cost-by.js';
import { renderCostOverTime } from './section-cost-time.js';
import { renderCrossTab } from './section-crosstab.js';
import { renderHeadline } from './section-headline.js';
import { renderKeepalive } from './section-keepalive.js';
import { renderDataQuality } from './section-quality.js';
import { renderReplay } from './section-replay.js';
import { renderTtlOverride } from './section-ttl.js';

type SectionKey = Exclude<keyof ReportData, 'meta'>;

export interface SectionDef<K extends SectionKey = SectionKey> {
  key: K;
  id: string;
  title: string;
  render: (value: Exclude<NonNullable<ReportData[K]>, { error: string }>, charts: ChartSink, data: ReportData) => SectionOutput;
}

function def<K extends SectionKey>(d: SectionDef<K>): SectionDef {
  return d as unknown as SectionDef;
}

export const SECTIONS: SectionDef[] = [
  def({ key: 'headline', id: 'headline', title: 'Headline', render: (v) => renderHeadline(v) }),
  def({ key: 'costOverTime', id: 'cost-over-time', title: 'Cost over time', render: renderCostOverTime }),
  def({ key: 'costBy', id: 'cost-by', title: 'Cost by project, model and agent type', render: renderCostBy }),
  def({ key: 'anatomy', id: 'anatomy', title: 'Cache anatomy by agent type', render: renderAnatomy }),
  def({ key: 'topChains', id: 'top-chains', title: 'Top chains by waste', render: renderTopChains }),
  def({ key: 'crossTab', id: 'cross-tab', title: 'Agents × skill_listing attachments', render: (v) => renderCrossTab(v) }),
  def({ key: 'ttlOverride', id: 'ttl-override', title: 'What if: TTL override', render: renderTtlOverride }),
  def({ key: 'keepalive', id: 'keepalive', title: 'What if: keepalive pings', render: renderKeepalive }),
  def({ key: 'replay', id: 'replay', title: 'Replay: delivery strategies', render: renderReplay }),
  def({ key: 'blocks', id: 'blocks', title: '5-hour blocks', render: renderBlocks }),
  def({ key: 'dataQuality', id: 'data-quality', title: 'Data quality', render: (v, _charts, data) => renderDataQuality(v, data.meta.filters) }),
];
