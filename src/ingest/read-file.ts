/**
 * Reads one transcript file from a byte offset: buffers of up to `chunkSize` bytes, lines found by
 * their newline bytes, each line projected in place (project.ts). A line longer than a chunk is
 * streamed through stream-json (stream-project.ts) instead, so memory stays at about one chunk
 * however large a file or a line is.
 *
 * A last line without a newline is read if it parses; if it does not, it is a half-written line:
 * counted as `incomplete_last_line` and left unread (`readTo` stops before it), so the next run
 * reads it once Claude Code has finished writing it. A line read without its newline and then
 * written on (no newline first) is no append: ingest reads that file again whole (appendFingerprint).
 *
 * I/O is synchronous (the reader runs in worker threads, or on the main thread for small jobs,
 * with nothing else to wait for): on a 1 GB corpus of 15,000 files, promise-based open/stat/read/
 * close cost ~1.5 s of CPU, the sync calls ~0.25 s. One buffer per thread is kept between files.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { FileParser, type FileFacts, type FileIdentity, type ParserState, type Spill } from './file-parser.js';
import { fingerprintFd } from './fingerprint.js';
import { LINE_SCHEMA, type Line } from './line.js';
import { isLongString, ProjectionError, projectLine, SHORT_STRING } from './project.js';
import { StreamProjector } from './stream-project.js';

/**
 * A file larger than this is read in pieces of this size. With 64 MiB pieces, one 700 MB
 * transcript read on the main thread peaked ~50 MiB higher (BENCHMARKS-log.md, Memory, session 27);
 * the reading's speed did not depend on it (256 KB pieces: Cold, session 20).
 */
export const DEFAULT_CHUNK = 16 * 1024 * 1024;

/**
 * Lines longer than this are streamed (stream-project.ts); a shorter line longer than a piece
 * grows the buffer once, to room for a line this long. Streamed, a 20 MB line took 2 – 3 times as
 * long as projected in place (five of them: 1.2 – 2.0 s against 0.57 – 0.61 s), and 64 MiB is
 * where the pieces were before (session 27).
 */
export const STREAM_ABOVE = 64 * 1024 * 1024;

export interface ReadOptions {
  /** byte offset to start at (the end of the last complete line read before) */
  from?: number;
  /** number of lines before `from` (so line numbers stay those of the file) */
  linesBefore?: number;
  chunkSize?: number;
  /**
   * lines longer than this take the streaming path (default: STREAM_ABOVE, or chunkSize if larger;
   * tests set 0 to force it)
   */
  streamAbove?: number;
  /** the parser state saved when the file was last read (for an appended read) */
  state?: ParserState;
  /** with a spill: FileParser's thresholds (default SPILL_AT, SPILL_KEEP; tests make them small) */
  spillAt?: number;
  spillKeep?: number;
}

export interface ReadResult {
  facts: FileFacts;
  size: number;
  mtimeMs: number;
  /** end of the last complete line */
  readTo: number;
  /** lines up to readTo */
  lines: number;
  bytesRead: number;
  /** fingerprint.ts over [0, readTo), taken through the same descriptor */
  fingerprint: string;
}

const NL = 0x0a;

/** The buffer kept between files (not above SPARE_MAX, so a rare big file does not pin its chunk). */
let spare: Buffer | null = null;
const SPARE_MAX = 16 * 1024 * 1024;

function buffer(need: number): Buffer {
  if (spare && spare.length >= need) return spare.subarray(0, need);
  if (need > SPARE_MAX) return Buffer.allocUnsafe(need);
  spare = Buffer.allocUnsafe(Math.min(SPARE_MAX, Math.max(need, 2 * (spare?.length ?? 0), 256 * 1024)));
  return spare.subarray(0, need);
}

export async function readTranscript(path: string, id: FileIdentity, opts: ReadOptions = {}): Promise<ReadResult> {
  return readTranscriptSync(path, id, opts);
}

/**
 * With `spill`, facts the parser is done with are handed to it as the file is read (FileParser),
 * and the result's facts are the rest; without, the result holds them all.
 */
export function readTranscriptSync(path: string, id: FileIdentity, opts: ReadOptions = {}, spill?: Spill): ReadResult {
  const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK;
  const streamAbove = opts.streamAbove ?? Math.max(chunkSize, STREAM_ABOVE);
  const parser = new FileParser(id, opts.state, spill, opts.spillAt, opts.spillKeep);
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    const size = st.size;
    let pos = opts.from ?? 0;
    let lineNo = opts.linesBefore ?? 0;
    if (pos > 0 && pos < size) pos += lineEndHere(fd, pos);
    let readTo = pos;
    let buf = buffer(Math.min(chunkSize, Math.max(size - pos, 1)) + 1);
    let have = 0; // bytes of buf holding data not yet consumed, starting at 0
    let stream: StreamProjector | null = null;
    // the first UTF16_LOOK bytes of the line being streamed
    let streamHead = Buffer.alloc(0);
    // of the line being streamed: its bytes so far, and the NULs it opens with (all of them while it is NULs alone),
    // so that a line of NULs failing is said by its true count, not its head's (4,096)
    let streamLen = 0;
    let streamNuls = 0;
    // its last byte so far: a CR before its newline ends it, as handle() takes a CR LF (it is not text after its NULs)
    let streamLast = -1;
    const streamed = (b: Buffer, s: number, e: number) => {
      if (streamNuls === streamLen) streamNuls += leadingNuls(b, s, e);
      streamLen += e - s;
      if (e > s) streamLast = b[e - 1]!;
    };
    let bomChecked = pos > 0;
    // the last line said to be UTF-16 text: a lone NUL after it, at the end, is its newline's other half
    let utf16Line = -1;

    const handle = (b: Buffer, s: number, e: number) => {
      lineNo++;
      if (!bomChecked) {
        bomChecked = true;
        if (bomAt(b, s)) s += 3;
      }
      if (e > s && b[e - 1] === 0x0d) e--;
      if (isBlank(b, s, e)) return;
      if (e - s > streamAbove) {
        const sp = new StreamProjector(LINE_SCHEMA);
        try {
          sp.write(b.subarray(s, e));
          addLine(parser, lineNo, sp.end());
        } catch (err) {
          // looked at only once it failed, as a shorter line is
          const said = nulSaid(b, s, e, (err as Error).message);
          if (said === UTF16_SAID) utf16Line = lineNo;
          parser.skip(lineNo, 'invalid_json', said);
        }
        return;
      }
      try {
        const l = projectLine(b, s, e, LINE_SCHEMA);
        if (l.isSidechain === true) wholePrompt(l, b, s, e);
        if (parser.needsWholeContent(l)) wholeContent(l, b, s, e);
        // only a line longer than SHORT_STRING bytes can hold a text field that long (FileParser.add)
        addLine(parser, lineNo, l, e - s > SHORT_STRING);
      } catch (err) {
        // RangeError: a value nested deeper than the stack lets the projector or an attachment's
        // canonical text (file-parser.ts) go (~3,000 levels): that line, not the file
        if (!(err instanceof ProjectionError) && !(err instanceof RangeError)) throw err;
        const said = err instanceof RangeError ? `nested too deeply to read (${err.message})` : nulSaid(b, s, e, err.message);
        if (said === UTF16_SAID) utf16Line = lineNo;
        parser.skip(lineNo, 'invalid_json', said);
      }
    };

    while (pos < size) {
      // Read only what the buffer has room for. A partial line that fills it is longer than a
      // chunk: the buffer grows once, to room for a line of streamAbove bytes, and a line longer
      // than that is streamed below, so the buffer stays that size (growing it to fit the line
      // held a 64 MB and a 128 MB buffer at once for a 300 MB line; growing by chunks copied the
      // line again at each).
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(have + Math.min(Math.max(chunkSize, streamAbove + 1 - have), size - pos));
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const want = Math.min(chunkSize, size - pos, buf.length - have);
      const bytesRead = readSync(fd, buf, have, want, pos);
      if (bytesRead === 0) break; // the file shrank while we read it
      pos += bytesRead;
      const end = have + bytesRead;

      let s = 0;
      if (stream) {
        // inside a giant line: feed until its newline
        const nl = buf.indexOf(NL, have);
        if (nl < 0 || nl >= end) {
          stream.write(buf.subarray(0, end));
          streamed(buf, 0, end);
          have = 0;
          continue;
        }
        stream.write(buf.subarray(0, nl));
        streamed(buf, 0, nl);
        lineNo++;
        try {
          addLine(parser, lineNo, stream.end());
        } catch (err) {
          // its opening bytes, kept when it began to stream, looked at only now that it failed
          const whole = streamNuls === streamLen || (streamNuls === streamLen - 1 && streamLast === 0x0d);
          const said = nulSaid(streamHead, 0, streamHead.length, (err as Error).message, { n: streamNuls, whole });
          if (said === UTF16_SAID) utf16Line = lineNo;
          parser.skip(lineNo, 'invalid_json', said);
        }
        stream = null;
        // the lines after it in this read are read now: at the end of the file there is no next
        // read, and what is left after the loop is taken for one last line
        s = nl + 1;
      }
      for (;;) {
        const nl = buf.indexOf(NL, s);
        if (nl < 0 || nl >= end) break;
        handle(buf, s, nl);
        s = nl + 1;
      }
      readTo = pos - (end - s);
      const rest = end - s;
      if (rest >= streamAbove && rest >= chunkSize) {
        // a line longer than a chunk: stream it
        stream = new StreamProjector(LINE_SCHEMA);
        if (!bomChecked && bomAt(buf, s)) s += 3;
        bomChecked = true;
        // a copy of its opening, for the UTF-16 look should it fail (once a line of a chunk or more)
        streamHead = Buffer.from(buf.subarray(s, Math.min(end, s + UTF16_LOOK)));
        streamLen = 0;
        streamNuls = 0;
        streamLast = -1;
        streamed(buf, s, end);
        stream.write(buf.subarray(s, end));
        have = 0;
      } else {
        buf.copy(buf, 0, s, end);
        have = rest;
      }
    }

    // a last line without a newline
    if (stream) {
      lineNo++;
      try {
        addLine(parser, lineNo, stream.end());
        readTo = pos;
      } catch {
        parser.skip(lineNo, 'incomplete_last_line', 'no newline and not complete JSON (still being written?)');
        lineNo--;
      }
    } else if (have === 1 && buf[0] === 0 && utf16Line === lineNo) {
      // UTF-16LE text ends "\n" as 0A 00: the 00 after the last newline is no line still being
      // written but the rest of that newline (it was an incomplete_last_line skip beside the UTF-16 ones)
      readTo = pos;
    } else if (have > 0 && !isBlank(buf, !bomChecked && bomAt(buf, 0) ? 3 : 0, have)) {
      // (past a byte order mark, as handle() reads the line: a file of a mark alone, or a mark and
      // blanks, is an empty file, not a line still being written)
      let ok = true;
      try {
        projectLine(buf, !bomChecked && bomAt(buf, 0) ? 3 : 0, have, LINE_SCHEMA);
      } catch {
        ok = false;
      }
      if (ok) {
        handle(buf, 0, have);
        readTo = pos;
      } else {
        parser.skip(lineNo + 1, 'incomplete_last_line', 'no newline and not complete JSON (still being written?)');
      }
    } else readTo = pos;

    const facts = parser.finish();
    return { facts, size, mtimeMs: st.mtimeMs, readTo, lines: lineNo, bytesRead: pos - (opts.from ?? 0), fingerprint: fingerprintFd(fd, readTo) };
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes at `from` that end a line already counted (0, 1 or 2): when the last read took a
 * complete last line that had no newline yet and its newline ("\n", or "\r\n") has since been
 * written at `from`, those bytes end that line, not a new blank one.
 * Example: "{…}\n{…}" read to its end, then "\r\n{…}\n" appended → 2.
 */
function lineEndHere(fd: number, from: number): number {
  const three = Buffer.alloc(3);
  const bytesRead = readSync(fd, three, 0, 3, from - 1);
  if (bytesRead < 2 || three[0] === NL) return 0;
  if (three[1] === NL) return 1;
  return bytesRead === 3 && three[1] === 0x0d && three[2] === NL ? 2 : 0;
}

/**
 * A v1.x sidechain's prompt (a user line's `message.content` as one string) longer than the
 * projector keeps where the schema expects blocks (project.ts SHORT_STRING: it gives a LONG_STRING marker):
 * taken whole from the line's bytes, so that the sidechain's root is matched with the Task call
 * that spawned it by the prompt's hash (file-parser.ts; the call's prompt is projected whole).
 * Only such lines are parsed again; a line streamed (64 MiB or more) keeps the marker.
 */
function wholePrompt(l: Line, b: Buffer, s: number, e: number): void {
  const m = l.message as { content?: unknown } | null | undefined;
  if (!m || typeof m !== 'object' || !isLongString(m.content)) return;
  try {
    const content = (JSON.parse(b.toString('utf8', s, e)) as { message?: { content?: unknown } }).message?.content;
    if (typeof content === 'string') l.message = { ...m, content };
  } catch {
    // (the projector read it: JSON.parse will too)
  }
}

/**
 * Sets `l.wholeContent`, the line's message.content as JSON.parse reads it (FileParser.needsWholeContent
 * asks it only for a spawn's result without toolUseResult.agentId: one line a spawn). A line
 * streamed for its length (64 MiB or more) is not read again: its agent stays as its other links say.
 */
function wholeContent(l: Line, b: Buffer, s: number, e: number): void {
  try {
    l.wholeContent = (JSON.parse(b.toString('utf8', s, e)) as { message?: { content?: unknown } }).message?.content;
  } catch {
    // (the projector read it: JSON.parse will too)
  }
}

/**
 * A line that does not parse and looks like UTF-16 text, said as such: a file saved as UTF-16 (an
 * editor's "Unicode") was 97 lines of `not a JSON object`, with no word on why. A line of NUL bytes
 * (a zero-filled block, as a crash leaves) is said as that: any NUL in its first two bytes made it
 * "UTF-16 text" too. Only a line that failed is looked at.
 */
function nulSaid(b: Buffer, s: number, e: number, message: string, lead?: { n: number; whole: boolean }): string {
  if (utf16Text(b, s, e)) return UTF16_SAID;
  // a streamed line's: [s, e) is its head alone, its NULs counted as it streamed
  const n = lead ? lead.n : leadingNuls(b, s, e);
  if (n < 2) return message;
  const block = `${n.toLocaleString('en-US')} NUL bytes (a zero-filled block, as a crash leaves)`;
  return (lead ? lead.whole : s + n === e) ? block : `opens with ${block}, then: ${message}`;
}

/** How many NUL bytes [s, e) opens with. */
function leadingNuls(b: Buffer, s: number, e: number): number {
  let n = 0;
  while (s + n < e && b[s + n] === 0) n++;
  return n;
}

export const UTF16_SAID = 'UTF-16 text, not UTF-8 (Claude Code writes UTF-8: convert the file, e.g. iconv -f UTF-16 -t UTF-8)';

/** The bytes of UTF-16 text at most this many of a line's first are looked at (utf16Text). */
const UTF16_LOOK = 4096;

/** Of the code units looked at, at least this many must have their NUL on one side (utf16Text). */
const UTF16_UNITS = 8;

/**
 * Whether the bytes [s, e) of a line look like UTF-16 text: over its first UTF16_LOOK bytes read as
 * two-byte units (after a byte-order mark, FF FE little-endian, FE FF big-endian; else either way, from
 * its first byte or its second), every unit is a character of text: a printable one (not U+0000, no
 * control but tab, newline and carriage return, no C1 control, not U+FFFE or U+FFFF), a surrogate only
 * in a pair; and at least UTF16_UNITS units (every one, on a line of fewer after a mark) and an eighth
 * of them are ASCII or Latin-1 (a byte and a NUL): `{"` is 7B 00 22 00 in UTF-16LE, 00 7B 00 22 in
 * UTF-16BE. A character past U+00FF has no NUL byte: text that opens with such characters
 * (`日本 {"type"…`, E5 65 2C 67 7B 00 …) is UTF-16 by the ASCII after them. Binary bytes (gzip, xz,
 * random: a NUL beside a byte now and then, among control characters and lone surrogates), a line of
 * NULs alone, and NULs then UTF-8 text are not: the test was only that the units with a NUL on one
 * side outnumbered the others eightfold, which 1 line of a gzipped log, 1 of 1,953 of xz and 8 of
 * 78,103 of random bytes passed. Only a line that failed is looked at.
 * Example: 00 7B 00 22 00 74 … → true; E5 65 7B 00 22 00 74 00 … → true; 4,096 × 00 → false; 7B 22 74 … → false.
 */
export function utf16Text(b: Buffer, s: number, e: number): boolean {
  if (e - s >= 2 && ((b[s] === 0xff && b[s + 1] === 0xfe) || (b[s] === 0xfe && b[s + 1] === 0xff))) {
    // a byte-order mark alone (its line's newline after it) is UTF-16 text still
    return e - s < 4 || utf16Units(b, s + 2, e, b[s] === 0xff);
  }
  if (e - s < 16) return false;
  // from its first byte, or its second: a line after the first of a UTF-16LE file begins with the 00 of the
  // newline before it (0A 00), and so does one after a character holding a 0A byte (U+010A is 0A 01); its other
  // characters read a byte off are no text (→ U+2192, 92 21, read so gives 00 92 and 21 ..)
  return utf16Units(b, s, e, true) || utf16Units(b, s, e, false) || utf16Units(b, s + 1, e, true) || utf16Units(b, s + 1, e, false);
}

/** Whether the bytes from `s` (at most UTF16_LOOK of them before `e`) read as UTF-16 units, little-endian or not, are text (utf16Text). */
function utf16Units(b: Buffer, s: number, e: number, le: boolean): boolean {
  const end = s + (Math.min(e - s, UTF16_LOOK) & ~1);
  const units = (end - s) / 2;
  let latin = 0;
  let lead = false; // the unit before was a high surrogate
  for (let i = s; i < end; i += 2) {
    const u = le ? b[i]! | (b[i + 1]! << 8) : (b[i]! << 8) | b[i + 1]!;
    const trail = u >= 0xdc00 && u <= 0xdfff;
    if (lead !== trail) return false;
    lead = u >= 0xd800 && u <= 0xdbff;
    if (u < 0x100) {
      if (u < 0x20 ? u !== 0x09 && u !== 0x0a && u !== 0x0d : u >= 0x7f && u < 0xa0) return false;
      latin++;
    } else if (u >= 0xfffe) return false;
  }
  // a high surrogate last is a character cut by the look's end (or by its line's, at a 0A byte in it)
  return latin >= Math.min(UTF16_UNITS, units) && latin * 8 >= units;
}

/** Whether a UTF-8 byte order mark starts at `s`. */
function bomAt(b: Buffer, s: number): boolean {
  return b[s] === 0xef && b[s + 1] === 0xbb && b[s + 2] === 0xbf;
}

/** `long`: whether the line may hold a text field longer than SHORT_STRING characters (a streamed line does). */
function addLine(parser: FileParser, lineNo: number, l: Line, long = true): void {
  parser.add(lineNo, l, long);
}

function isBlank(b: Buffer, s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}
