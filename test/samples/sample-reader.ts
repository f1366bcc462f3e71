/**
 * A small, independent reader of a generated corpus for the sample tests: it knows nothing of
 * the generator's plan, only the files, so the tests can hold truth.json against what is on
 * disk (global (message.id, requestId) de-dup, field-wise max usage, first-seen time).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface FileUsage {
  input: number;
  output: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
}

export interface SampleRequest extends FileUsage {
  key: string;
  messageId: string;
  requestId: string | null;
  model: string;
  t: number;
  chainId: string | null;
  /** outputs of the own-file lines, in file order */
  lineOutputs: number[];
  copies: Set<string>;
  usageLines: number;
}

export interface SampleChain {
  chainId: string;
  file: string;
  rounds: number;
  /** skill_listing attachments per round (index 0 = before any prompt) */
  skillListingsByRound: number[];
  attachments: Record<string, number>;
  /** request keys in file order, with the round they fell in */
  requests: { key: string; round: number; segment: number }[];
  compactions: number;
  meta: Record<string, unknown> | null;
}

export interface SampleFile {
  path: string;
  lines: number;
  invalid: number;
  incomplete: boolean;
  synthetic: number;
  types: Record<string, number>;
}

export interface Spawn {
  toolUseId: string;
  name: string;
  input: Record<string, unknown>;
  agentId: string | null;
}

export interface Sample {
  files: Map<string, SampleFile>;
  requests: Map<string, SampleRequest>;
  chains: Map<string, SampleChain>;
  spawns: Map<string, Spawn>;
  /** every parsed line object, by file */
  objects: Map<string, Record<string, unknown>[]>;
}

function walk(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(root, p));
    else out.push(relative(root, p).split('\\').join('/'));
  }
  return out.sort();
}

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (v !== null && typeof v === 'object' ? (v as Obj) : {});

function usageOf(u: Obj): FileUsage {
  const cc = o(u['cache_creation']);
  return {
    input: Number(u['input_tokens'] ?? 0),
    output: Number(u['output_tokens'] ?? 0),
    cache_write_5m: Number(cc['ephemeral_5m_input_tokens'] ?? 0),
    cache_write_1h: Number(cc['ephemeral_1h_input_tokens'] ?? 0),
    cache_read: Number(u['cache_read_input_tokens'] ?? 0),
  };
}

export function readSample(root: string): Sample {
  const sample: Sample = { files: new Map(), requests: new Map(), chains: new Map(), spawns: new Map(), objects: new Map() };
  const paths = walk(root).filter((p) => p.startsWith('projects/'));
  for (const p of paths.filter((x) => x.endsWith('.jsonl'))) {
    const text = readFileSync(join(root, p), 'utf8');
    const rawLines = text.split('\n');
    const complete = text.endsWith('\n');
    if (complete) rawLines.pop();
    const file: SampleFile = { path: p, lines: rawLines.length, invalid: 0, incomplete: false, synthetic: 0, types: {} };
    sample.files.set(p, file);
    const objs: Obj[] = [];
    sample.objects.set(p, objs);
    const sub = /\/subagents\/(?:workflows\/[^/]+\/)?agent-([^/]+)\.jsonl$/.exec(p);
    let chain: SampleChain | null = null;
    let round = 0;
    let segment = 0;
    rawLines.forEach((raw, i) => {
      let line: Obj;
      try {
        line = JSON.parse(raw) as Obj;
      } catch {
        if (i === rawLines.length - 1 && !complete) file.incomplete = true;
        else file.invalid++;
        return;
      }
      objs.push(line);
      const type = String(line['type']);
      file.types[type] = (file.types[type] ?? 0) + 1;
      const sessionId = String(line['sessionId'] ?? '');
      if (!chain && sessionId && type !== 'queue-operation' && type !== 'last-prompt') {
        const chainId = sub ? `${sessionId}:${sub[1]}` : sessionId;
        let meta: Obj | null = null;
        try {
          meta = JSON.parse(readFileSync(join(root, p.replace(/\.jsonl$/, '.meta.json')), 'utf8')) as Obj;
        } catch {
          meta = null;
        }
        chain = { chainId, file: p, rounds: 0, skillListingsByRound: [0], attachments: {}, requests: [], compactions: 0, meta };
        sample.chains.set(chainId, chain);
      }
      if (type === 'system' && line['subtype'] === 'compact_boundary') {
        segment++;
        if (chain) chain.compactions++;
      }
      if (type === 'user') {
        const msg = o(line['message']);
        const content = msg['content'];
        const isPrompt = line['isCompactSummary'] !== true && line['isMeta'] !== true && (typeof content === 'string' || (Array.isArray(content) && content.some((b) => o(b)['type'] !== 'tool_result')));
        if (isPrompt && chain) {
          round++;
          chain.rounds = round;
          chain.skillListingsByRound.push(0);
        }
        const result = o(line['toolUseResult']);
        if (typeof result['agentId'] === 'string' && Array.isArray(content)) {
          for (const b of content) {
            const s = sample.spawns.get(String(o(b)['tool_use_id']));
            if (s) s.agentId = result['agentId'] as string;
          }
        }
      }
      if (type === 'attachment' && chain) {
        const at = String(o(line['attachment'])['type']);
        chain.attachments[at] = (chain.attachments[at] ?? 0) + 1;
        if (at === 'skill_listing') chain.skillListingsByRound[round] = (chain.skillListingsByRound[round] ?? 0) + 1;
      }
      let msg: Obj | null = null;
      let requestId: string | null = null;
      let t = 0;
      let own = false;
      if (type === 'assistant') {
        msg = o(line['message']);
        requestId = typeof line['requestId'] === 'string' ? line['requestId'] : null;
        t = Date.parse(String(line['timestamp']));
        own = true;
        for (const b of (msg['content'] as unknown[]) ?? []) {
          const block = o(b);
          if (block['type'] === 'tool_use' && (block['name'] === 'Agent' || block['name'] === 'Task' || block['name'] === 'SendMessage')) {
            sample.spawns.set(String(block['id']), { toolUseId: String(block['id']), name: String(block['name']), input: o(block['input']), agentId: null });
          }
        }
      } else if (type === 'progress' && o(line['data'])['type'] === 'agent_progress') {
        const inner = o(o(line['data'])['message']);
        if (inner['type'] === 'assistant') {
          msg = o(inner['message']);
          requestId = typeof inner['requestId'] === 'string' ? inner['requestId'] : null;
          t = Date.parse(String(inner['timestamp'] ?? line['timestamp']));
        }
      }
      if (!msg || !msg['usage']) return;
      if (msg['model'] === '<synthetic>') {
        file.synthetic++;
        return;
      }
      const messageId = String(msg['id']);
      const key = requestId === null ? messageId : `${messageId}\u0000${requestId}`;
      const u = usageOf(o(msg['usage']));
      let r = sample.requests.get(key);
      if (!r) {
        r = { key, messageId, requestId, model: String(msg['model']), t, chainId: null, lineOutputs: [], copies: new Set(), usageLines: 0, ...u };
        sample.requests.set(key, r);
      } else {
        r.input = Math.max(r.input, u.input);
        r.output = Math.max(r.output, u.output);
        r.cache_write_5m = Math.max(r.cache_write_5m, u.cache_write_5m);
        r.cache_write_1h = Math.max(r.cache_write_1h, u.cache_write_1h);
        r.cache_read = Math.max(r.cache_read, u.cache_read);
        r.t = Math.min(r.t, t);
      }
      r.usageLines++;
      r.copies.add(`${p}\u0000${own ? 'own' : 'progress'}`);
      if (own && chain) {
        r.lineOutputs.push(u.output);
        if (r.chainId === null) {
          r.chainId = chain.chainId;
          chain.requests.push({ key, round, segment });
        }
      }
    });
  }
  return sample;
}
