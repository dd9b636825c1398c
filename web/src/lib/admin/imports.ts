// Data for Services → Import: a vendor's OpenAPI document checked (dry run) or saved as a draft,
// the draft's review saved, and publishing. The review itself is pure (import-review.ts).
import { api, unwrap, type components } from '../client.ts';

export type ImportReport = components['schemas']['ImportReport'];
export type ImportPreview = components['schemas']['ImportPreview'];
export type ImportSaved = components['schemas']['ImportSaved'];
export type TemplateChanges = NonNullable<ImportSaved['changes']>;

export interface ImportRequest {
  /** JSON or YAML text as pasted or read from the file; the server parses it. */
  document: string;
  key?: string;
  scope: 'org' | 'user';
}

export const checkImport = (req: ImportRequest) => unwrap(api.POST('/v1/templates/import', { body: { ...req, dry_run: true } })) as Promise<ImportPreview>;
export const importDraft = (req: ImportRequest) => unwrap(api.POST('/v1/templates/import', { body: { ...req, dry_run: false } })) as Promise<ImportSaved>;
export const publishTemplate = (id: string) => unwrap(api.POST('/v1/templates/{id}/publish', { params: { path: { id } } }));

// The report and changes of a template's last import, for its review page (the API answers them
// only once, with the import). Kept in memory for this tab only.
export interface LastImport {
  report: ImportReport;
  changes?: TemplateChanges | undefined;
}
const lastImports = new Map<string, LastImport>();
export const rememberImport = (id: string, last: LastImport) => void lastImports.set(id, last);
export const lastImportOf = (id: string): LastImport | undefined => lastImports.get(id);
