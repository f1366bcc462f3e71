/**
 * Preload (`node --import`) for the fault suite: every way a Node program opens a network
 * connection or resolves a name is replaced by one that records the attempt and throws. The
 * suite asserts the record stays empty. (Native code, such as DuckDB's own HTTP client, is not
 * seen here; the suite's strace run covers that.)
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { record } from './record.mjs';

function refuse(what) {
  record({ net: what });
  throw new Error(`network access refused by the fault suite: ${what}`);
}

const describe = (args) => {
  const a = args[0];
  if (Array.isArray(a)) return describe(a);
  if (a && typeof a === 'object') return `${a.host ?? a.path ?? '?'}:${a.port ?? ''}`;
  return args.map(String).join(':');
};

net.Socket.prototype.connect = function connect(...args) {
  refuse(`net connect ${describe(args)}`);
};
for (const name of ['lookup', 'lookupService', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveNs', 'resolveSrv', 'resolveTxt', 'reverse']) {
  if (typeof dns[name] === 'function') dns[name] = (...args) => refuse(`dns ${name} ${String(args[0])}`);
  if (typeof dns.promises[name] === 'function') dns.promises[name] = async (...args) => refuse(`dns.promises ${name} ${String(args[0])}`);
}
dgram.createSocket = (...args) => refuse(`dgram createSocket ${describe(args)}`);
globalThis.fetch = async (input) => refuse(`fetch ${String(input)}`);
syncBuiltinESMExports();
