// Every action of every built-in service compiles into a request, and that request (method, URL,
// fixed headers, body, and a form body's encoded bytes) matches the recorded table in __snapshots__/catalog-requests.json. A change to a service
// file or to the request builder that moves any URL or body fails here; after a deliberate
// change, review the diff and re-record with
// `npx vitest run test/unit/execution/catalog-requests.test.ts --update`
// (not `-u <file>`: -u takes the path as its value and then runs every test).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeFormBody } from '../../../core/execution/form-body.ts';
import { buildActionRequest } from '../../../core/execution/request.ts';
import type { CompiledAction, CompiledService } from '../../../core/registry/types.ts';
import { loadServiceDirectories } from '../../../server/registry/loader.ts';

const SERVICES_DIR = fileURLToPath(new URL('../../../services', import.meta.url));

type Schema = Record<string, unknown>;

function firstType(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  return typeof t === 'string' ? t : undefined;
}

/** A deterministic value for a schema: enum first value, else by type. */
function sample(name: string, schema: Schema | undefined, depth = 0): unknown {
  const s = schema ?? {};
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.const !== undefined) return s.const;
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0 && firstType(s) === undefined) return sample(name, options[0] as Schema, depth + 1);
  }
  switch (firstType(s)) {
    case 'integer':
    case 'number':
      return 42;
    case 'boolean':
      return true;
    case 'array':
      return [sample(name, s.items as Schema | undefined, depth + 1)];
    case 'object':
      return depth > 8 ? {} : requiredProperties(s, depth + 1);
    default:
      return `sample-${name}`;
  }
}

function requiredProperties(schema: Schema, depth = 0): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const out: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) out[name] = sample(name, props[name], depth);
  return out;
}

function sampleParams(action: CompiledAction): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const p of action.parameters) if (p.required) params[p.name] = sample(p.name, p.schema.raw);
  if (action.bodySchema) Object.assign(params, requiredProperties(action.bodySchema));
  return params;
}

/** JSON with object keys sorted, so the recorded file is stable. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

describe('the built-in catalog', async () => {
  const { services, errors } = await loadServiceDirectories([SERVICES_DIR], { error: () => {} });

  it('loads every built-in service file', () => {
    expect(errors).toEqual([]);
    expect(services.length).toBeGreaterThan(0);
  });

  it('builds every action into the recorded request', async () => {
    const table: Record<string, unknown> = {};
    const problems: Record<string, unknown> = {};
    let count = 0;
    for (const service of [...services].sort((a: CompiledService, b: CompiledService) => a.key.localeCompare(b.key))) {
      for (const action of [...service.actions.values()].sort((a, b) => a.key.localeCompare(b.key))) {
        count++;
        const params = sampleParams(action);
        const built = buildActionRequest(service, action, params);
        const id = `${service.key}.${action.key}`;
        if (!built.ok) {
          problems[id] = built.problems;
          continue;
        }
        const { method, url, body } = built.request;
        // A form body is recorded as the bytes that leave too (a fixed multipart boundary).
        const form = body !== undefined && action.bodyForm ? { form: encodeFormBody(body as Record<string, unknown>, action.bodyForm, 'BOUNDARY') } : {};
        table[id] = { method, url, ...(action.fixedHeaders ? { headers: action.fixedHeaders } : {}), ...(body !== undefined ? { body } : {}), ...form };
      }
    }
    expect(problems).toEqual({});
    expect(Object.keys(table).length).toBe(count);
    await expect(`${JSON.stringify(sortKeys(table), null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/catalog-requests.json');
  });
});
