// Which request and response media types the template can carry. Pure.
import { isObject, type JsonObject } from './normalize.ts';

export const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'] as const;

/** The media type without parameters, lower case ("application/json; charset=utf-8" → "application/json"). */
export function baseType(mediaType: string): string {
  return mediaType.split(';')[0]!.trim().toLowerCase();
}

export function isJsonType(mediaType: string): boolean {
  const t = baseType(mediaType);
  return t === 'application/json' || t === 'text/json' || t === '*/*' || /^application\/[^/]*\+json$/.test(t);
}

/** Success responses' media types: 2xx (and 2XX), else `default`. Empty when none has content. */
export function successMediaTypes(operation: JsonObject): string[] {
  const responses = isObject(operation['responses']) ? operation['responses'] : {};
  const codes = Object.keys(responses).filter((c) => /^2(\d\d|XX)$/i.test(c));
  const chosen = codes.length > 0 ? codes : Object.hasOwn(responses, 'default') ? ['default'] : [];
  const types = new Set<string>();
  for (const code of chosen) {
    const response = responses[code];
    const content = isObject(response) && isObject(response['content']) ? response['content'] : {};
    for (const t of Object.keys(content)) types.add(baseType(t));
  }
  return [...types];
}

/** `binary` when every success response with content is something other than JSON. */
export function responseType(operation: JsonObject): 'json' | 'binary' {
  const types = successMediaTypes(operation);
  return types.length > 0 && !types.some(isJsonType) ? 'binary' : 'json';
}

/** A schema property that carries file bytes (a multipart file part). */
export function isFileSchema(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  if (schema['format'] === 'binary' || schema['format'] === 'base64' || typeof schema['contentMediaType'] === 'string') return true;
  return schema['type'] === 'array' && isFileSchema(schema['items']);
}
