// Any supported vendor document → one dereferenced OpenAPI 3.1 object graph, by libraries:
// @scalar/openapi-upgrader lifts Swagger 2.0 and OpenAPI 3.0.x to 3.1 (definitions →
// components, consumes/produces → content, nullable → type lists); swagger-parser follows the
// local `$ref`s (external resolution off: refs.ts has already refused any non-local one). A
// circular schema stays circular as shared JS objects; schema-cut.ts bounds it on the way out.
import SwaggerParser from '@apidevtools/swagger-parser';
import { upgrade } from '@scalar/openapi-upgrader';
import { ImportRefused } from './errors.ts';
import { assertLocalRefs } from './refs.ts';

export type SourceFormat = 'swagger-2.0' | 'openapi-3.0' | 'openapi-3.1';
export type JsonObject = Record<string, unknown>;

export function sourceFormat(value: unknown): SourceFormat {
  const doc = isObject(value) ? value : undefined;
  if (doc && doc['swagger'] === '2.0') return 'swagger-2.0';
  const version = doc?.['openapi'];
  if (typeof version === 'string' && /^3\.0\.\d+$/.test(version)) return 'openapi-3.0';
  if (typeof version === 'string' && /^3\.1\.\d+$/.test(version)) return 'openapi-3.1';
  throw new ImportRefused('not_openapi', 'the document is not OpenAPI 3.1, 3.0.x or Swagger 2.0 (no "openapi: 3.x.y" or "swagger: \'2.0\'" field)');
}

export async function normalizeDocument(value: unknown): Promise<{ format: SourceFormat; api: JsonObject }> {
  const format = sourceFormat(value);
  const doc = value as JsonObject; // sourceFormat accepts objects only
  assertLocalRefs(doc);
  if (!isObject(doc['paths']) && doc['paths'] !== undefined) throw new ImportRefused('not_openapi', 'paths must be an object');
  // The upgrader edits what it is given; the caller's value stays as sent.
  const upgraded = format === 'openapi-3.1' ? structuredClone(doc) : (upgrade(structuredClone(doc), '3.1') as unknown as JsonObject);
  let api: unknown;
  try {
    api = await SwaggerParser.dereference(upgraded as never, {
      resolve: { external: false, file: false, http: false },
      dereference: { circular: true },
      validate: { schema: false, spec: false },
    } as never);
  } catch (err) {
    throw new ImportRefused('not_openapi', `the document's references do not resolve: ${clip(err)}`);
  }
  if (!isObject(api)) throw new ImportRefused('not_openapi', 'the document is not an object');
  return { format, api };
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clip(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
