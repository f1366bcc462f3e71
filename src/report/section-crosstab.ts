/** The agent-type (or definition) × skill_listing cross-tab of SPEC §4, as a table. */
import { definitionRank } from '../analyses/crosstab.js';
import type { CrossTab, CrossTabRow } from './data.js';
import { fmtCount, fmtInt, fmtPct, leftOutMark } from './format.js';
import { sortableTable, type Cell, type Column } from './html.js';
import { andList, type SectionOutput } from './section.js';

/**
 * Whether the rows are split by definition beyond their key (agent-type rows come one per
 * agent type and definition): then the definition is named, or an agent type whose chains are
 * resolved in one place and lost in another showed as two rows of the same name.
 */
function byDefinition(d: CrossTab): boolean {
  return d.rowDimension !== 'definition' && d.rows.some((r) => r.definition !== undefined);
}

/** A row's name in the reading. Example: “Explore” (definition lost); main threads, whose definition is `main`, plain “main” */
function rowName(d: CrossTab, r: CrossTabRow): string {
  return byDefinition(d) && r.definition !== undefined && r.definition !== 'main' ? `“${r.key}” (definition ${r.definition})` : `“${r.key}”`;
}

/**
 * The chains of `rows`, with those of them that never got to a request: the headline, `summary`
 * and `sessions` count only chains with requests, and a session that sent none read "0 chains"
 * there and "(1 chain) has none" here. `noun`: '3 chains, …' rather than '3, …'; `after` follows
 * the count ('6 chains in all, 1 without a request').
 * Example: a row of 3 chains, 1 of them without requests → '3 chains, 1 without a request';
 * of 1 without → '1 chain, without a request'; of 2 without → '2 chains, none with a request'
 */
function chainCount(rows: CrossTabRow[], noun: boolean, after = ''): string {
  const chains = rows.reduce((s, r) => s + r.chains, 0);
  const without = rows.reduce((s, r) => s + (r.chainsWithoutRequests ?? 0), 0);
  const n = (noun ? fmtCount(chains, 'chain') : fmtInt(chains)) + after;
  if (without === 0) return n;
  if (without === chains) return `${n}, ${chains === 1 ? 'without a request' : 'none with a request'}`;
  return `${n}, ${fmtInt(without)} without a request`;
}

/**
 * Names the rows where every chain's skill_listing count equals its round count, and the rows
 * with none. Example: lost 62/62 equal, resolved 0 listings →
 * "In “lost” every chain (62) carries as many skill_listing attachments as rounds; “resolved” (165 chains) has none."
 * With rows a (2 chains) and b (4) of none: "…; “a” and “b” have none, 6 chains in all."
 */
export function crossTabReading(d: CrossTab): string {
  const equal = d.rows.filter((r) => r.chains > 0 && r.chainsListingsEqualRounds === r.chains);
  const none = d.rows.filter((r) => r.chains > 0 && r.chainsWithSkillListing === 0);
  const parts: string[] = [];
  // several rows are one list ("“a” and “b”", as other readings name ties), not a run of commas
  if (equal.length) parts.push(`In ${andList(equal.map((r) => rowName(d, r)))} every chain (${chainCount(equal, false)}) carries as many skill_listing attachments as rounds`);
  // one row: its count after its name; several: the count first, of the whole list (after the last name
  // it read as that row's own: '“a”, “b” and “c” (16 chains) have none')
  if (none.length === 1) parts.push(`${rowName(d, none[0]!)} (${chainCount(none, true)}) has none`);
  else if (none.length) parts.push(`${andList(none.map((r) => rowName(d, r)))} have none, ${chainCount(none, true, ' in all')}`);
  if (!parts.length) {
    const partial = d.rows.filter((r) => r.chainsListingsEqualRounds > 0);
    return partial.length
      ? `skill_listing count equals round count in some chains of ${andList(partial.map((r) => rowName(d, r)))}, but in no row for every chain.`
      : 'No row has skill_listing attachments equal to its rounds.';
  }
  return parts.join('; ') + '.';
}

export function renderCrossTab(d: CrossTab): SectionOutput {
  const definition = byDefinition(d);
  // rows of definitions in crosstab's order, most to least certain (main, resolved, lost, unknown);
  // a definition's cell sorts by that order too, where the header sorted it alphabetically (lost first)
  const rows = d.rowDimension === 'definition' ? [...d.rows].sort((a, b) => definitionRank(a.key) - definitionRank(b.key)) : d.rows;
  const table = sortableTable(
    `${d.rowDimension} × skill_listing attachments; highlighted: every chain of the row has as many skill_listing attachments as rounds (more than 0)`,
    [
      { label: d.rowDimension },
      ...(definition ? [{ label: 'definition', hint: 'resolved: the agent type is the one requested; lost: it differs (the definition was dropped); unknown: one of them is not known; main: a main thread, which no spawn requested' } satisfies Column] : []),
      { label: 'chains', numeric: true, hint: 'chains in scope, those that never got to a request included (the headline counts only chains with requests)' },
      { label: 'with skill_listing', numeric: true, hint: 'chains with at least one skill_listing attachment' },
      { label: 'without', numeric: true },
      { label: 'skill_listings', numeric: true, hint: 'attachments over all chains of the row' },
      { label: 'rounds', numeric: true },
      { label: 'listings = rounds', numeric: true, hint: 'chains whose skill_listing count equals their round count, more than 0' },
      { label: 'weight', numeric: true },
    ],
    rows.map((r) => {
      const allEqual = r.chains > 0 && r.chainsListingsEqualRounds === r.chains;
      return [
        d.rowDimension === 'definition' ? { text: r.key, sort: definitionRank(r.key) } : { text: r.key },
        ...(definition ? [{ text: r.definition ?? '', sort: r.definition === undefined ? null : definitionRank(r.definition) } satisfies Cell] : []),
        { text: fmtInt(r.chains), sort: r.chains },
        { text: `${fmtInt(r.chainsWithSkillListing)} (${fmtPct(r.chains ? r.chainsWithSkillListing / r.chains : 0, 0)})`, sort: r.chainsWithSkillListing },
        { text: fmtInt(r.chains - r.chainsWithSkillListing), sort: r.chains - r.chainsWithSkillListing },
        { text: fmtInt(r.skillListings), sort: r.skillListings, className: allEqual ? 'hit' : '' },
        { text: fmtInt(r.rounds), sort: r.rounds, className: allEqual ? 'hit' : '' },
        { text: `${fmtInt(r.chainsListingsEqualRounds)} / ${fmtInt(r.chains)}`, sort: r.chainsListingsEqualRounds, className: allEqual ? 'hit' : '' },
        { text: r.weight === null ? 'unknown' : `${fmtInt(r.weight)} wt${leftOutMark(r.weight, r.unpricedRequests)}`, sort: r.weight ?? undefined },
      ];
    }),
  );
  return { reading: crossTabReading(d), body: table };
}
