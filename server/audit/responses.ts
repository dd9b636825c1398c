// Response body of GET /v1/audit.
import { z } from 'zod';
import { nextCursor, timestamp } from '../http/openapi/common.ts';
import { auditEntryFields, auditEntryNames } from './entry.ts';

export const AuditEntry = z
  .strictObject({ id: z.int(), at: timestamp, http_status_code: z.int().nullable(), ...auditEntryFields, ...auditEntryNames })
  .meta({ id: 'AuditEntry' });

export const AuditPage = z.strictObject({ entries: z.array(AuditEntry), next_cursor: nextCursor });
