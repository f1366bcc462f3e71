/**
 * Preload (`node --import`) for the fault suite: makes the file system misbehave at the exact
 * moment a case needs, with real kernel errors and real writes, by wrapping fs/promises `open`
 * and `readFile` and their sync counterparts `openSync`, `readSync` and `readFileSync` (the
 * reader, the fingerprint and the .meta.json files use sync I/O):
 *
 * - FAULT_VANISH=a.jsonl,b.jsonl — the first open (or readFile) of a file with that name unlinks
 *   it just before opening: the file was listed, then vanished before it was read (ENOENT from the kernel).
 * - FAULT_GROW=a.jsonl, FAULT_GROW_DATA=/path — after the first read from the first handle opened
 *   on that name returns, the bytes of FAULT_GROW_DATA are appended to the file: it grows while it
 *   is being read, past the size the reader took at open.
 * - FAULT_FULL_WRITE=report.html — every fs/promises writeFile to a file whose name begins with that
 *   fails with ENOSPC and writes nothing: a disk that is full.
 * - FAULT_KILL_WRITE=report.html — the first fs/promises writeFile to a file whose name begins with
 *   that (the file itself, or a part written beside it and renamed into place) writes the first half
 *   of its data, then the process is killed (SIGKILL): a run stopped while it wrote its output.
 *
 * Each fault fires once and is recorded in FAULT_PROBE_OUT (the kill before it dies).
 */
import fs, { appendFileSync, unlinkSync } from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';
import { record } from './record.mjs';

const vanish = new Set((process.env.FAULT_VANISH ?? '').split(',').filter(Boolean));
const grow = process.env.FAULT_GROW ?? '';
let grown = false;
const realOpen = fsp.open;
const realReadFile = fsp.readFile;

function maybeVanish(path) {
  if (vanish.delete(basename(String(path)))) {
    unlinkSync(path);
    record({ fault: 'vanish', path: String(path) });
  }
}

fsp.readFile = async function readFile(path, ...rest) {
  if (typeof path === 'string' || path instanceof URL) maybeVanish(path);
  return realReadFile.call(this, path, ...rest);
};

fsp.open = async function open(path, ...rest) {
  const name = basename(String(path));
  maybeVanish(path);
  const fh = await realOpen.call(this, path, ...rest);
  if (grow && name === grow && !grown) {
    grown = true;
    const read = fh.read;
    let fired = false;
    fh.read = async function (...args) {
      const r = await read.apply(this, args);
      if (!fired) {
        fired = true;
        appendFileSync(path, realReadFileSync(process.env.FAULT_GROW_DATA));
        record({ fault: 'grow', path: String(path) });
      }
      return r;
    };
  }
  return fh;
};

const killWrite = process.env.FAULT_KILL_WRITE ?? '';
const fullWrite = process.env.FAULT_FULL_WRITE ?? '';
const realWriteFile = fsp.writeFile;
fsp.writeFile = async function writeFile(path, data, ...rest) {
  if (fullWrite && (typeof path === 'string' || path instanceof URL) && basename(String(path)).startsWith(fullWrite)) {
    record({ fault: 'full-write', path: String(path) });
    throw Object.assign(new Error(`ENOSPC: no space left on device, write '${String(path)}'`), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  }
  if (killWrite && (typeof path === 'string' || path instanceof URL) && basename(String(path)).startsWith(killWrite)) {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    await realWriteFile.call(this, path, text.slice(0, Math.floor(text.length / 2)), ...rest);
    record({ fault: 'kill-write', path: String(path) });
    process.kill(process.pid, 'SIGKILL');
  }
  return realWriteFile.call(this, path, data, ...rest);
};

const realOpenSync = fs.openSync;
const realReadSync = fs.readSync;
let growFd = -1;
let growPath = '';

fs.openSync = function openSync(path, ...rest) {
  if (typeof path === 'string' || path instanceof URL) maybeVanish(path);
  const fd = realOpenSync.call(this, path, ...rest);
  if (grow && basename(String(path)) === grow && !grown) {
    grown = true;
    growFd = fd;
    growPath = String(path);
  }
  return fd;
};

const realReadFileSync = fs.readFileSync;
fs.readFileSync = function readFileSync(path, ...rest) {
  if (typeof path === 'string' || path instanceof URL) maybeVanish(path);
  return realReadFileSync.call(this, path, ...rest);
};

fs.readSync = function readSync(fd, ...rest) {
  const r = realReadSync.call(this, fd, ...rest);
  if (fd === growFd) {
    growFd = -1;
    appendFileSync(growPath, realReadFileSync(process.env.FAULT_GROW_DATA));
    record({ fault: 'grow', path: growPath });
  }
  return r;
};
syncBuiltinESMExports();
