// The CLI prints what the gateway's error says of each field (cli/lib/caller.ts), not only its message.
import { describe, expect, it } from 'vitest';
import { detailLines, envelopeText } from '../../../cli/lib/caller.ts';

const envelope = (details?: Record<string, unknown>, code = 'invalid_request', message = 'the request is not valid') => ({ error: { code, message, ...(details ? { details } : {}) } });

describe('error details in the CLI', () => {
  it('prints one line a validation issue: the field and why', () => {
    const body = envelope({ issues: [{ path: 'slack.bot_token', message: 'must be a Slack bot token (xoxb-…)' }, { path: '', message: 'Unrecognized key: "fax"' }] });
    expect(envelopeText(body, 400)).toBe('the request is not valid (invalid_request)\n  slack.bot_token: must be a Slack bot token (xoxb-…)\n  (request): Unrecognized key: "fax"');
  });

  it("prints a call's parameter problems, and a lone field", () => {
    expect(detailLines(envelope({ problems: [{ field: 'amount', message: 'must be integer' }] }))).toEqual(['  amount: must be integer']);
    expect(detailLines(envelope({ field: 'email.password' }, 'invalid_request', 'password is required with user'))).toEqual(['  field: email.password']);
  });

  it('adds nothing when the details say nothing of fields', () => {
    expect(envelopeText(envelope({ retry_after_seconds: 3 }, 'rate_limited', 'slow down'), 429)).toBe('slow down (rate_limited)');
    expect(envelopeText(undefined, 502)).toBe('the gateway answered HTTP 502 (http_502)');
  });
});
