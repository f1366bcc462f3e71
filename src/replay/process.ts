/**
 * Resident agent processes as the chat app runs them (SPEC §6.1): one per (channel, binding),
 * at most 4 alive, optionally reaped after an idle period measured on the channel's own clock.
 *
 * Whether a turn is cold, warm or reloaded is decided in exactly one place, `decideDelivery`.
 */
import { SegmentList, type RequestView } from './request.js';

export type Delivery = 'cold' | 'warm' | 'reloaded';

/**
 * What a provider-side conversation holds: the native session id, the turns so far, and the
 * previous request (the cacheable prefix is measured against it).
 */
export interface AgentSession {
  native: string;
  history: SegmentList;
  lastRequest: RequestView | null;
  /** epoch ms of the last request, for the TTL */
  lastAt: number | null;
  /** ids of the rows this native process has been shown */
  shownIds: Set<string>;
}

export interface AgentProcess {
  key: string;
  session: AgentSession;
  lastActiveAt: number;
}

/**
 * The one decision: a live process is warm (it is sent only the newest turn; it is never sent
 * its own transcript); without one, a saved session is reloaded (framing + the newest turn on
 * top of the saved conversation, same native id); otherwise the turn is cold (framing + this
 * turn, empty history, a new native id).
 *
 * Example: alive → 'warm'; reaped with its session kept → 'reloaded'; evicted → 'cold'.
 */
export function decideDelivery(alive: AgentProcess | undefined, saved: AgentSession | undefined): Delivery {
  if (alive) return 'warm';
  if (saved) return 'reloaded';
  return 'cold';
}

export interface ProcessPoolOptions {
  /** at most this many processes alive (the least recently active is reaped first) */
  maxAlive?: number;
  /** reap a process idle longer than this (ms); null = never */
  idleMs?: number | null;
  /** keep a reaped process's session so the next turn reloads it (default: no, it is cold) */
  keepReapedSessions?: boolean;
}

export class ProcessPool {
  private readonly alive = new Map<string, AgentProcess>();
  private readonly saved = new Map<string, AgentSession>();
  private natives = 0;
  private readonly maxAlive: number;
  private readonly idleMs: number | null;
  private readonly keepReaped: boolean;
  /** processes reaped so far (idle or over the cap) */
  reaped = 0;

  constructor(opts: ProcessPoolOptions = {}) {
    this.maxAlive = opts.maxAlive ?? 4;
    this.idleMs = opts.idleMs ?? null;
    this.keepReaped = opts.keepReapedSessions ?? false;
  }

  private newSession(): AgentSession {
    this.natives++;
    return { native: `native-${this.natives}`, history: new SegmentList(), lastRequest: null, lastAt: null, shownIds: new Set() };
  }

  private reap(p: AgentProcess): void {
    this.alive.delete(p.key);
    this.reaped++;
    if (this.keepReaped) this.saved.set(p.key, p.session);
  }

  /** The process that answers a turn of `key` at time `at`, and how the turn reaches it. */
  acquire(key: string, at: number): { delivery: Delivery; process: AgentProcess } {
    if (this.idleMs !== null) {
      for (const p of [...this.alive.values()]) if (at - p.lastActiveAt > this.idleMs) this.reap(p);
    }
    const live = this.alive.get(key);
    const saved = this.saved.get(key);
    const delivery = decideDelivery(live, saved);
    if (delivery === 'warm') {
      // a reply posted after this mention keeps the later time (idle counts from the last answer)
      live!.lastActiveAt = Math.max(live!.lastActiveAt, at);
      return { delivery, process: live! };
    }
    while (this.alive.size >= this.maxAlive) {
      const lru = [...this.alive.values()].reduce((a, b) => (b.lastActiveAt < a.lastActiveAt ? b : a));
      this.reap(lru);
    }
    this.saved.delete(key);
    const process: AgentProcess = { key, session: delivery === 'reloaded' ? saved! : this.newSession(), lastActiveAt: at };
    this.alive.set(key, process);
    return { delivery, process };
  }

  /** Evicts (or crashes) a process: it and its session are gone; the next turn is cold. */
  evict(key: string): void {
    this.alive.delete(key);
    this.saved.delete(key);
  }
}
