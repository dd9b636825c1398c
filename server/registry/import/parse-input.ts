// A vendor's document as sent (JSON or YAML text, or an object the JSON body parser built) →
// one plain JSON value, within the import's limits. Nothing here follows a reference: the
// document is checked for non-local `$ref`s before any library sees it (refs.ts).
import { parseDocument } from 'yaml';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../../core/text/storable.ts';
import { ImportRefused } from './errors.ts';

/** The import's own body limit (the rest of the API keeps 1 MB). */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
/** The API's JSON depth limit: published documents nest ~20-25 levels (GitHub's, Stripe's). */
export const MAX_NESTING = MAX_JSON_DEPTH;
/** YAML anchors a document may reuse before expansion is refused (the billion-laughs guard). */
export const MAX_YAML_ALIASES = 100;

export function parseImportInput(input: unknown): unknown {
  const value = typeof input === 'string' ? parseText(input) : input;
  // Iterative, so hostile nesting cannot overflow the stack here or in any later recursive walk;
  // and a YAML escape can yield text PostgreSQL cannot store (NUL, a lone surrogate).
  const found = findJsonProblem(value, MAX_NESTING);
  if (found?.problem === 'too_deep') throw new ImportRefused('too_deep', `the document nests deeper than ${MAX_NESTING} levels (at ${found.path.slice(0, 120)}…)`, found.path.slice(0, 500));
  if (found) throw new ImportRefused('unparseable', `the document has text that cannot be stored (NUL or a lone surrogate) at ${found.path || 'the top'}`, found.path);
  return value;
}

function parseText(text: string): unknown {
  if (Buffer.byteLength(text, 'utf8') > MAX_IMPORT_BYTES) {
    throw new ImportRefused('too_large', `the document is larger than ${MAX_IMPORT_BYTES} bytes`);
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    // JSON is YAML too, but the JSON parser is two orders of magnitude faster on a 10 MB document.
    try {
      return JSON.parse(text);
    } catch {
      // Not strict JSON (a trailing comma, a comment): YAML's flow syntax may still read it.
    }
  }
  let document;
  try {
    document = parseDocument(text, { prettyErrors: false });
  } catch (err) {
    // The YAML composer recurses per nesting level: a hostile nesting ends the stack, not the process.
    if (err instanceof RangeError) throw new ImportRefused('too_deep', 'the document nests too deeply to read');
    throw new ImportRefused('unparseable', `the document is not valid YAML or JSON: ${message(err)}`);
  }
  const first = document.errors[0];
  // The parser reports its own stack running out (hostile nesting) as RESOURCE_EXHAUSTION.
  if (first?.code === 'RESOURCE_EXHAUSTION') throw new ImportRefused('too_deep', 'the document nests too deeply to read');
  if (first) {
    const where = first.linePos ? ` (line ${first.linePos[0].line}, column ${first.linePos[0].col})` : '';
    throw new ImportRefused('unparseable', `the document is not valid YAML or JSON: ${first.message}${where}`);
  }
  try {
    return document.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    if (err instanceof RangeError) throw new ImportRefused('too_deep', `the document nests too deeply to read`);
    throw new ImportRefused('too_many_aliases', `the document expands YAML aliases too often: ${message(err)}`);
  }
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
