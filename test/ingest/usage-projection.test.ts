/**
 * LINE_SCHEMA projects only the usage fields readUsage reads. readUsage must give the same
 * result on that projection as on the whole block parsed with JSON.parse, for well-formed blocks
 * and for every kind of wrong value (strings, fractions, objects, arrays, nulls, extra fields).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LINE_SCHEMA } from '../../src/ingest/line.js';
import { type SchemaObject, projectLine } from '../../src/ingest/project.js';
import { StreamProjector } from '../../src/ingest/stream-project.js';
import { readUsage } from '../../src/ingest/usage.js';

const usageSchema = (LINE_SCHEMA.message as SchemaObject).usage;
const lineSchema: SchemaObject = { usage: usageSchema };

function both(usageJson: string): void {
  const line = `{"usage":${usageJson}}`;
  const whole = readUsage(JSON.parse(usageJson));
  const projected = readUsage(projectLine(Buffer.from(line), 0, Buffer.byteLength(line), lineSchema).usage);
  const sp = new StreamProjector(lineSchema);
  sp.write(Buffer.from(line));
  const streamed = readUsage(sp.end().usage);
  assert.deepEqual(projected, whole, usageJson);
  assert.deepEqual(streamed, whole, usageJson);
}

test('a real usage block reads the same projected as parsed whole', () => {
  both(
    '{"input_tokens":3,"cache_creation_input_tokens":22926,"cache_read_input_tokens":41352,"output_tokens":215,"server_tool_use":{"web_search_requests":1,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":22926},"inference_geo":"global","iterations":[],"speed":"standard"}',
  );
  both('{"input_tokens":3,"cache_creation_input_tokens":15005,"cache_read_input_tokens":11442,"output_tokens":9}');
  for (const odd of ['null', '[]', '"usage"', '7', '{}', '{"cache_creation":[1]}', '{"cache_creation":{"ephemeral_5m_input_tokens":"3"}}', '{"input_tokens":1.5}', '{"output_tokens":{"a":1}}', '{"server_tool_use":"x","speed":5}', '{"server_tool_use":[1,2]}', `{"cache_creation":"${'x'.repeat(5000)}"}`, '{"cache_creation":1e400}']) both(odd);
});

test('generated usage blocks, right and wrong, read the same projected as parsed whole', () => {
  const anyValue = fc.oneof(fc.nat({ max: 2e9 }), fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 6 }), fc.constant(null), fc.boolean(), fc.array(fc.nat(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.nat(), { maxKeys: 2 }));
  const split = fc.oneof(anyValue, fc.record({ ephemeral_5m_input_tokens: anyValue, ephemeral_1h_input_tokens: anyValue }, { requiredKeys: [] }));
  const server = fc.oneof(anyValue, fc.record({ web_search_requests: anyValue, web_fetch_requests: anyValue }, { requiredKeys: [] }));
  const block = fc.record(
    {
      input_tokens: anyValue,
      output_tokens: anyValue,
      cache_creation_input_tokens: anyValue,
      cache_read_input_tokens: anyValue,
      cache_creation: split,
      server_tool_use: server,
      service_tier: anyValue,
      speed: anyValue,
      inference_geo: anyValue,
      iterations: anyValue,
    },
    { requiredKeys: [] },
  );
  fc.assert(fc.property(fc.oneof(block, anyValue), (u) => both(JSON.stringify(u))), { numRuns: 3000 });
});
