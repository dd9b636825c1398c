// The error of a request the gateway will not send again because an earlier attempt may have sent
// it (its durable "about to send" mark is there and the request is not idempotent). One text for
// the covered path and the approved path.
import type { ErrorBody } from '../workflows/definitions.ts';

export const OUTCOME_UNKNOWN: ErrorBody = {
  code: 'outcome_unknown',
  message:
    'the gateway stopped while this request may already have reached the upstream; it is not idempotent, so it was not sent again: check the upstream before retrying',
};
