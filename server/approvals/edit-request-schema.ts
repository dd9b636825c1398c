// Edit before approve, raw HTTP: the `request` an approver sends with allow (REST resolve and
// edit-preview, MCP gateway_approve). A raw call names its target `path` (SPEC: the call endpoint's
// raw HTTP fields are service, method, path), so an edit takes the same spelling; `url`, the
// dashboard's and the stored request's word, stays accepted. Both parse to `url`, the one name the
// rest of the edit path (resolve-input.ts, core/approvals/request-edit.ts) reads.
import { z } from 'zod';

const target = (also: string) =>
  z
    .string()
    .min(1)
    .max(8192)
    .refine((v) => URL.canParse(v), 'must be an absolute URL, as the raw call\'s path was')
    .optional()
    .describe(`The new target: an absolute URL, query string included (${also}).`);

export const editRequestSchema = z
  .strictObject({
    method: z.string().regex(/^[A-Za-z]{3,10}$/, 'must be an HTTP verb').optional(),
    path: target('as the raw call spells it; or url'),
    url: target('the same as path'),
    headers: z.record(z.string().min(1).max(256), z.string().max(8192)).optional(),
    body: z.unknown().optional(),
  })
  .refine((v) => v.path === undefined || v.url === undefined, { message: 'give path or url (the same field), not both', path: ['url'] })
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'must change at least one of method, path, headers, body')
  .transform(({ path, url, ...rest }) => {
    const target = path ?? url;
    return target === undefined ? rest : { ...rest, url: target };
  })
  .describe('With allow_once / allow_remember, a raw HTTP request replacing what the agent sent: method, path (absolute URL; url is the same field), headers (credential headers excepted), body (its fields only: an edit cannot add one).');
