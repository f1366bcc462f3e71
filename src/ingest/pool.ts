/**
 * Reads many transcripts on a pool of worker threads sized to the cores (JSON work is CPU-bound).
 * Small jobs stay on the main thread, where starting a worker would cost more than it saves; so
 * does a job of one file, unless the caller loads the stage in pieces as it goes (PieceOptions).
 *
 *   tasks ─▶ order (largest first) ─▶ batches ─▶ worker 1 … n ─▶ results ─▶ onDone (main thread)
 *                                    shared cursor ─┘
 *
 * Workers take the next position in the order from a cursor in shared memory instead of asking
 * the main thread for it, so they never wait while the main thread is busy storing facts. They
 * may run at most AHEAD results in front of what the main thread has taken, so memory stays
 * bounded however many files there are. When they stage (readAll's `stage`), a worker writes
 * every row of a file, its `files` row too, and reports only that it did, for
 * STAGED_PER_MESSAGE files at a time.
 *
 * The tasks themselves reach every worker in batches of BATCH positions, sent ahead of the
 * cursor: a worker keeps only the batches from its current position on, instead of the whole
 * list (156,520 tasks on a 10 GB corpus were ~70 MB of heap in each worker). As no worker can
 * claim a position more than (AHEAD + n) × STAGED_PER_MESSAGE + n past what the main thread has
 * taken, sending BATCH beyond that before each take means a worker never waits for a batch
 * either. The main thread keeps the caller's tasks (or makes each when asked for it, TaskList)
 * and one index per task for the order, nothing else per task.
 *
 * Example: 3 tasks of 5, 50 and 1 MB on 2 workers: both get the batch [50, 5, 1]; worker A takes
 * the 50 MB file, worker B the 5 MB one and then the 1 MB one; onDone sees B's two results, then
 * A's.
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, type Worker, type WorkerOptions } from 'node:worker_threads';
import { type FactColumns, encodeFacts } from '../store/fact-columns.js';
import { StagedRows } from '../store/stage.js';
import type { FileRow } from '../store/store.js';
import type { FileFacts, FileIdentity } from './file-parser.js';
import { startModuleWorker } from './module-worker.js';
import { type ReadOptions, type ReadResult, readTranscriptSync } from './read-file.js';

export interface ReadTask {
  seq: number;
  path: string;
  id: FileIdentity;
  opts: ReadOptions;
  /** bytes to read, when known: bigger tasks are started first */
  bytes?: number;
  /** what its `files` row takes from the walk and the stored row; required when staging (fileRowOf) */
  file?: FileContext;
}

/** The parts of a file's `files` row its reader does not find in the file itself. */
export interface FileContext {
  root: string;
  kind: FileRow['kind'];
  /** size and mtime as walked */
  size: number;
  mtimeMs: number;
  agentId: string | null;
  /** the session and project to keep when the lines read name none */
  sessionId: string | null;
  project: string;
  /** synthetic lines counted by earlier reads of the file */
  synthetic: number;
}

/**
 * A read file's `files` row: what it read, with its context.
 * Example: a file walked at 900 bytes and read to 900 keeps the walk's mtime; one that grew to
 * 1,000 while it was read gets the mtime taken when it was read, so the next run reads it again.
 */
export function fileRowOf(task: Pick<ReadTask, 'path'> & { file: FileContext }, r: ReadResult): FileRow {
  const c = task.file;
  const x = r.facts;
  return {
    fileId: x.fileId,
    path: task.path,
    root: c.root,
    kind: c.kind,
    size: r.size,
    mtimeMs: r.size === c.size ? c.mtimeMs : r.mtimeMs,
    readTo: r.readTo,
    lines: r.lines,
    // taken by the reader, over what it read: appended bytes never change it
    headHash: r.fingerprint,
    sessionId: x.sessionId ?? c.sessionId,
    agentId: c.agentId,
    project: x.cwd ?? c.project,
    synthetic: x.synthetic + c.synthetic,
    metaAgentType: null,
    metaToolUseId: null,
    parserState: x.state,
  };
}

/**
 * A file read: its result, whose facts keep only what describes the file (session, cwd, state,
 * counts), and its rows for the fact tables as columns, ready for StoreWriter.columns; or, when
 * readers stage (readAll's `stage`), files read whose rows, their `files` rows included, the
 * reader staged itself: their positions and the bytes they read. Or a file that could not be read.
 */
export type ReadOutcome = { task: ReadTask; result: ReadResult; columns: FactColumns } | Staged | { task: ReadTask; error: { code: string | null; message: string } };

/** Files read and staged whole: their tasks' positions (seq) and the bytes read from them. */
export interface Staged {
  seqs: number[];
  bytesRead: number;
}

/**
 * Tasks made when asked for, rather than an array of them all: a run's first reading of 10 GB
 * has 156,520 (BENCHMARKS-log.md, Memory). `get` is asked for a position when its batch is sent and
 * again when its outcome arrives; `bytes` for every position, to order them.
 */
export interface TaskList {
  length: number;
  get(i: number): Omit<ReadTask, 'seq'>;
  /** bytes to read: bigger tasks are started first */
  bytes(i: number): number;
}

/** What a worker posts: the task's seq with its result or error, or the files it staged since its last message. */
export type WorkerMessage = { seq: number; result: ReadResult; columns: FactColumns } | Staged | { seq: number; error: { code: string | null; message: string } };

/** A staged `observations` file a worker has closed (stage.ts Pieces); posted outside the AHEAD count. */
export interface PieceMessage {
  piece: string;
}

/** A worker's last message: it has no more tasks (messages of one port arrive in order, so all its results came before). */
export const DONE = 'done';

/** The tasks at positions from, from + 1, … of the order, sent to every worker. */
export interface TaskBatch {
  from: number;
  tasks: ReadTask[];
}

/** What a worker is started with. */
export interface ReaderData {
  shared: Int32Array;
  /** where its batches arrive, read synchronously (the worker never returns to its event loop) */
  port: MessagePort;
  /** its slot at READING + slot */
  slot: number;
  total: number;
  /** the StoreWriter's stage directory, where the worker writes its rows (stage.ts), or null to post them */
  stage: string | null;
  /** staged `observations` bytes at which the worker closes the file and posts it (PieceMessage); 0: never */
  pieceBytes: number;
}

/** Slots of the shared Int32Array. */
export const CURSOR = 0;
export const TAKEN = 1;
export const POSTED = 2;
/** positions sent in batches so far (a worker short of a batch waits on it) */
export const SENT = 3;
/** one slot per worker from here: the position it holds (read or not yet posted), -1 when none */
export const READING = 4;

/** Results the workers may post before the main thread has taken them. */
export const AHEAD = 8;

/**
 * Staged files a worker reports in one message (its last may hold fewer). A message per file,
 * each waking the main thread, cost each worker ~0.35 s in postMessage and ~0.35 s waiting for
 * results to be taken on 1 GB of logs (15,652 files; BENCHMARKS-log.md, Cold).
 */
export const STAGED_PER_MESSAGE = 16;

/** Tasks per batch message. */
export const BATCH = 64;

/**
 * A worker's young generation (MiB). V8's default lets each reader's nursery grow to ~48 MB of
 * short-lived line objects; 8 MB keeps the process ~50 MB smaller at no measurable cost in time.
 */
const YOUNG_GENERATION_MB = 8;

const WORKER_THRESHOLD_BYTES = 8 * 1024 * 1024;

/**
 * Staged pieces (readAll's `pieces`), for a reading that one transcript of at least `from` bytes
 * dominates (half the bytes or more): the workers close their staged `observations` every `bytes`
 * and post the files, which `done` gets once a core is free, so that DuckDB loads them while the
 * rest is read. A core is free from the start when the tasks are fewer than the cores (that
 * transcript read alone goes to one worker, not this thread), else once a worker has no more
 * tasks. Not before: with every core reading, loading beside the readers made the reading as
 * much longer (BENCHMARKS-log.md, Cold, session 17).
 */
export interface PieceOptions {
  from: number;
  bytes: number;
  done: (path: string) => void;
}

/** Starts a reader worker (tests stand in one that stops half-way). */
export type StartWorker = (options: WorkerOptions) => Worker;

/**
 * Reads one task; its rows go to `staged` when given, with its `files` row, else into the
 * message. A failure to write the stage is thrown (the run's problem); only reading the file
 * gives an error message. A staged read hands its rows on as the parser is done with them (so a
 * transcript of a million requests is not held whole), and takes them back if the file then
 * fails: the stage holds a file's rows only with its `files` row, except in pieces handed on
 * meanwhile (stage.ts Pieces), whose rows the ingest deletes with the failed file's other facts.
 * (`read`: tests stand in one that fails half-way.)
 */
export function readOne(task: ReadTask, staged: StagedRows | null = null, read = readTranscriptSync): WorkerMessage {
  let result: ReadResult;
  let columns: FactColumns;
  const mark = staged?.mark();
  // a failure to write the stage, kept apart from the file's own (the reader may catch it in a line)
  const stage = { failed: false, error: undefined as unknown };
  const spill = staged
    ? (f: FileFacts) => {
        try {
          staged.facts(encodeFacts(f));
        } catch (err) {
          if (!stage.failed) {
            stage.failed = true;
            stage.error = err;
          }
          throw err;
        }
      }
    : undefined;
  try {
    result = read(task.path, task.id, task.opts, spill);
    columns = encodeFacts(result.facts);
  } catch (err) {
    if (stage.failed) throw stage.error;
    if (staged && mark) staged.rollback(mark);
    const e = err as NodeJS.ErrnoException;
    return { seq: task.seq, error: { code: e.code ?? null, message: e.message } };
  }
  // a spill that failed inside a line the reader then skipped
  if (stage.failed) throw stage.error;
  if (staged) {
    if (!task.file) throw new Error(`a staged read needs its file's context: ${task.path}`);
    staged.facts(columns);
    staged.file(fileRowOf({ path: task.path, file: task.file }, result));
    return { seqs: [task.seq], bytesRead: result.bytesRead };
  }
  return { seq: task.seq, result: { ...result, facts: withoutRows(result.facts) }, columns };
}

/**
 * Reads every task and hands each outcome to onDone, on the main thread, once. Rejects when a
 * worker stops before its last file or onDone throws; no worker is left running then, and onDone
 * is not called again. With `stage` (a StoreWriter's stage directory), each reader writes its rows
 * there, in files of its own that are closed when this resolves, and the outcomes carry none.
 */
export async function readAll(
  list: readonly Omit<ReadTask, 'seq'>[] | TaskList,
  bytes: number,
  onDone: (o: ReadOutcome) => void,
  workers = availableParallelism(),
  start: StartWorker = startWorker,
  stage: string | null = null,
  pieces: PieceOptions | null = null,
): Promise<void> {
  const tasks: TaskList = 'get' in list ? list : { length: list.length, get: (i) => list[i], bytes: (i) => list[i].bytes ?? 0 };
  const task = (seq: number): ReadTask => ({ ...tasks.get(seq), seq });
  const outcome = (m: WorkerMessage): ReadOutcome => ('seqs' in m ? m : 'error' in m ? { task: task(m.seq), error: m.error } : { task: task(m.seq), result: m.result, columns: m.columns });
  const inPieces = pieces !== null && stage !== null && workers >= 2 && dominated(tasks, bytes, pieces.from);
  if (!inPieces && (workers <= 1 || bytes < WORKER_THRESHOLD_BYTES || tasks.length < 2)) {
    const staged = stage === null ? null : new StagedRows(stage, 'main');
    try {
      for (let seq = 0; seq < tasks.length; seq++) onDone(outcome(readOne(task(seq), staged)));
    } finally {
      staged?.close();
    }
    return;
  }
  const order = largestFirst(tasks);
  const n = Math.min(workers, tasks.length);
  const shared = new Int32Array(new SharedArrayBuffer((READING + n) * Int32Array.BYTES_PER_ELEMENT)).fill(-1, READING);
  const ports: MessagePort[] = [];
  const running: Worker[] = [];
  // positions whose outcome the main thread has taken
  let taken = 0;
  let sent = 0;
  let failure: Error | undefined;
  let finished = 0;
  // staged pieces posted while every core reads, handed on once one is free (PieceOptions)
  let free = n < workers;
  const waiting: string[] = [];

  // Before the main thread takes a result: batches up to BATCH past the furthest position a
  // worker can claim before the next take (AHEAD messages posted and one more per worker, each
  // of up to STAGED_PER_MESSAGE positions, and one in hand each).
  const sendAhead = () => {
    const want = Math.min(order.length, taken + (AHEAD + n) * STAGED_PER_MESSAGE + n + BATCH);
    while (sent < want) {
      const to = Math.min(order.length, sent + BATCH);
      const batch: TaskBatch = { from: sent, tasks: Array.from(order.subarray(sent, to), task) };
      for (const port of ports) port.postMessage(batch);
      sent = to;
      Atomics.store(shared, SENT, sent);
      Atomics.notify(shared, SENT);
    }
  };

  await new Promise<void>((resolve, reject) => {
    const fail = (err: Error) => {
      if (failure) return;
      failure = err;
      Promise.all(running.map((w) => w.terminate())).then(
        () => reject(err),
        () => reject(err),
      );
    };
    // false when the caller's `done` threw (the run then fails)
    const handOn = (paths: string[]) => {
      try {
        for (const p of paths) pieces!.done(p);
        return true;
      } catch (err) {
        fail(err as Error);
        return false;
      }
    };
    const unfinished = (slot: number) => {
      const at = Atomics.load(shared, READING + slot);
      return at < 0 ? 'before its last file' : `with ${tasks.get(order[at]).path} unfinished`;
    };
    const channels = Array.from({ length: n }, () => new MessageChannel());
    ports.push(...channels.map((c) => c.port1));
    try {
      // the first batches wait in the ports, so no worker starts by waiting for one
      sendAhead();
    } catch (err) {
      fail(err as Error);
      return;
    }
    for (let slot = 0; slot < n; slot++) {
      const port = channels[slot].port2;
      const workerData: ReaderData = { shared, port, slot, total: order.length, stage, pieceBytes: inPieces ? pieces.bytes : 0 };
      let w: Worker;
      try {
        w = start({ workerData, transferList: [port], resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      } catch (err) {
        fail(err as Error);
        return;
      }
      running.push(w);
      let done = false;
      w.on('message', (m: WorkerMessage | PieceMessage | typeof DONE) => {
        if (failure) return;
        if (typeof m === 'object' && 'piece' in m) {
          if (free) handOn([m.piece]);
          else waiting.push(m.piece);
          return;
        }
        if (m === DONE) {
          done = true;
          if (!free) {
            free = true;
            if (!handOn(waiting.splice(0))) return;
          }
          if (++finished === n) resolve();
          return;
        }
        try {
          sendAhead();
          taken += 'seqs' in m ? m.seqs.length : 1;
          Atomics.add(shared, TAKEN, 1);
          Atomics.notify(shared, TAKEN);
          onDone(outcome(m));
        } catch (err) {
          fail(err as Error);
        }
      });
      w.on('error', (err) => fail(new Error(`reader worker failed ${unfinished(slot)}: ${err.message}`, { cause: err })));
      w.on('exit', (code) => {
        if (!done) fail(new Error(`reader worker stopped (exit code ${code}) ${unfinished(slot)}`));
      });
    }
  }).finally(() => {
    for (const port of ports) port.close();
  });
}

/**
 * Whether one task holds at least `from` bytes and half of `bytes` (all the tasks' bytes).
 * Example: tasks of 700 and 300 MB, from 64 MB → true; 700 and 800 MB → false.
 */
function dominated(tasks: Pick<TaskList, 'length' | 'bytes'>, bytes: number, from: number): boolean {
  if (bytes < from) return false;
  for (let i = 0; i < tasks.length; i++) {
    const b = tasks.bytes(i);
    if (b >= from && 2 * b >= bytes) return true;
  }
  return false;
}

/**
 * Positions of the tasks, biggest first (ties in the callers' order): one 4-byte index per task.
 * Example: bytes [5, 50, 1] → [1, 0, 2].
 */
export function largestFirst(tasks: Pick<TaskList, 'length' | 'bytes'>): Uint32Array {
  const order = new Uint32Array(tasks.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => tasks.bytes(b) - tasks.bytes(a) || a - b);
}

/** Facts without their rows (those travel as columns): what is left describes the file. */
function withoutRows(f: FileFacts): FileFacts {
  return { ...f, observations: [], chains: [], spawns: [], links: [], sidechainRoots: [], attachments: [], events: [], lineCounts: new Map(), skipped: [] };
}

/** The reader worker (module-worker.ts). */
export function startWorker(options: WorkerOptions): Worker {
  return startModuleWorker('read-worker', options);
}
