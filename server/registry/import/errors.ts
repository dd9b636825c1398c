// Why an import was refused before any conversion: the route answers these as 400 with the code.
export type ImportRefusal =
  | 'not_openapi'
  | 'unparseable'
  | 'too_large'
  | 'too_deep'
  | 'too_many_aliases'
  | 'external_ref';

export class ImportRefused extends Error {
  readonly reason: ImportRefusal;
  readonly at: string | undefined;
  constructor(reason: ImportRefusal, message: string, at?: string) {
    super(message);
    this.name = 'ImportRefused';
    this.reason = reason;
    this.at = at;
  }
}
