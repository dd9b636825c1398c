// Refuses, once for every /v1 route, input no handler could store: a NUL character or a lone
// surrogate in any string of the path, the query or the JSON body (PostgreSQL refuses both, which
// would otherwise surface as a 500 deep in a handler), JSON nested deeper than MAX_JSON_DEPTH
// (found iteratively, before any handler walks it), and a JSON body that is not an object
// (every /v1 body is one; a bare scalar used to reach handlers that expect fields). The MCP
// endpoint applies the same inspection to tool arguments (`jsonInputError`).
import type { NextFunction, Request, Response } from 'express';
import { findJsonProblem, isStorableText, MAX_JSON_DEPTH } from '../../core/text/storable.ts';
import type { AppError } from '../errors.ts';
import { invalidRequest } from '../errors.ts';

const UNSTORABLE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

export function refuseUnstorableInput() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    for (const segment of req.path.split('/')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        throw invalidRequest('the path is not valid percent-encoding');
      }
      if (!isStorableText(decoded)) throw invalidRequest(`the path ${UNSTORABLE}`, { field: 'path' });
    }
    const inQuery = jsonInputError(req.query, 'query parameter');
    if (inQuery) throw inQuery;
    if (req.body !== undefined && req.is('application/json')) {
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
        throw invalidRequest('the request body must be a JSON object');
      }
      const inBody = jsonInputError(req.body, 'body field');
      if (inBody) throw inBody;
    }
    next();
  };
}

/** The typed error for JSON input with unstorable text or too deep a nesting, or null. */
export function jsonInputError(value: unknown, what: string): AppError | null {
  const found = findJsonProblem(value);
  if (!found) return null;
  if (found.problem === 'too_deep') {
    return invalidRequest(`the input is nested more than ${MAX_JSON_DEPTH} levels deep (at ${found.path || 'the top'})`, { field: found.path, max_depth: MAX_JSON_DEPTH });
  }
  return invalidRequest(`${what} ${found.path || '(name)'} ${UNSTORABLE}`, { field: found.path });
}
