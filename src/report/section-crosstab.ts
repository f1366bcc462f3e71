/** The agent-type (or definition) × skill_listing cross-tab of SPEC §4, as a table. */
import type { CrossTab } from './data.js';
import { fmtInt, fmtPct } from './format.js';
import { sortableTable } from './html.js';
import type { SectionOutput } from './section.js';

/**
 * Names the rows where every chain's skill_listing count equals its round count, and the rows
 * with none. Example: lost 62/62 equal, resolved 0 listings →
 * "In “lost” every chain (62) carries as many skill_listing attachments as rounds; “resolved” (165 chains) has none."
 */
export function crossTabReading(d: CrossTab): string {
  const equal = d.rows.filter((r) => r.chains > 0 && r.chainsListingsEqualRounds === r.chains);
  const none = d.rows.filter((r) => r.chains > 0 && r.chainsWithSkillListing === 0);
  const parts: string[] = [];
  if (equal.length) parts.push(`In ${equal.map((r) => `“${r.key}”`).join(', ')} every chain (${fmtInt(equal.reduce((s, r) => s + r.chains, 0))}) carries as many skill_listing attachments as rounds`);
  if (none.length) parts.push(`${none.map((r) => `“${r.key}”`).join(', ')} (${fmtInt(none.reduce((s, r) => s + r.chains, 0))} chains) ${none.length === 1 ? 'has' : 'have'} none`);
  if (!parts.length) {
    const partial = d.rows.filter((r) => r.chainsListingsEqualRounds > 0);
    return partial.length
      ? `skill_listing count equals round count in some chains of ${partial.map((r) => `“${r.key}”`).join(', ')}, but in no row for every chain.`
      : 'No row has skill_listing attachments equal to its rounds.';
  }
  return parts.join('; ') + '.';
}

export function renderCrossTab(d: CrossTab): SectionOutput {
  const table = sortableTable(
    `${d.rowDimension} × skill_listing attachments; highlighted: every chain of the row has as many skill_listing attachments as rounds`,
    [
      { label: d.rowDimension },
      { label: 'chains', numeric: true },
      { label: 'with skill_listing', numeric: true, hint: 'chains with at least one skill_listing attachment' },
      { label: 'without', numeric: true },
      { label: 'skill_listings', numeric: true, hint: 'attachments over all chains of the row' },
      { label: 'rounds', numeric: true },
      { label: 'listings = rounds', numeric: true, hint: 'chains whose skill_listing count equals their round count' },
      { label: 'weight', numeric: true },
    ],
    d.rows.map((r) => {
      const allEqual = r.chains > 0 && r.chainsListingsEqualRounds === r.chains;
      return [
        { text: r.key },
        { text: fmtInt(r.chains), sort: r.chains },
        { text: `${fmtInt(r.chainsWithSkillListing)} (${fmtPct(r.chains ? r.chainsWithSkillListing / r.chains : 0, 0)})`, sort: r.chainsWithSkillListing },
        { text: fmtInt(r.chains - r.chainsWithSkillListing), sort: r.chains - r.chainsWithSkillListing },
        { text: fmtInt(r.skillListings), sort: r.skillListings, className: allEqual ? 'hit' : '' },
        { text: fmtInt(r.rounds), sort: r.rounds, className: allEqual ? 'hit' : '' },
        { text: `${fmtInt(r.chainsListingsEqualRounds)} / ${fmtInt(r.chains)}`, sort: r.chainsListingsEqualRounds, className: allEqual ? 'hit' : '' },
        { text: r.weight === null ? 'unknown' : `${fmtInt(r.weight)} wt`, sort: r.weight ?? undefined },
      ];
    }),
  );
  return { reading: crossTabReading(d), body: table };
}
