// Schemas shared by many routes' responses. A schema with `.meta({ id })` becomes a named
// component of the OpenAPI document (`#/components/schemas/<id>`).
import { z } from 'zod';

export const uuid = z.uuid();
/** What `Date#toISOString()` produces. */
export const timestamp = z.iso.datetime();
export const nullableTimestamp = timestamp.nullable();

export const ErrorEnvelope = z
  .strictObject({
    error: z.strictObject({
      code: z.string().describe('A stable, typed error code (see each response for the codes a route can answer).'),
      message: z.string().describe('For people; not meant to be parsed.'),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
    request_id: z.string().describe('Also in the X-Request-Id response header.'),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Every /v1 error: `{"error": {"code", "message", "details"?}, "request_id"}`.' });

/** Cursor pagination: pass `next_cursor` back as `cursor`; null on the last page. */
export const nextCursor = z.string().nullable().describe('Opaque; pass it back as `cursor` for the next page. Null on the last page.');
