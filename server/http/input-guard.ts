// Refuses, once for every /v1 route, input no handler could store: a NUL character or a lone
// surrogate in any string of the path, the query or the JSON body (PostgreSQL refuses both, which
// would otherwise surface as a 500 deep in a handler), and a JSON body that is not an object
// (every /v1 body is one; a bare scalar used to reach handlers that expect fields).
import type { NextFunction, Request, Response } from 'express';
import { findUnstorableText, isStorableText } from '../../core/text/storable.ts';
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
    const inQuery = findUnstorableText(req.query);
    if (inQuery !== undefined) throw invalidRequest(`query parameter ${inQuery || '(name)'} ${UNSTORABLE}`, { field: inQuery });
    if (req.body !== undefined && req.is('application/json')) {
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
        throw invalidRequest('the request body must be a JSON object');
      }
      const inBody = findUnstorableText(req.body);
      if (inBody !== undefined) throw invalidRequest(`body field ${inBody || '(name)'} ${UNSTORABLE}`, { field: inBody });
    }
    next();
  };
}
