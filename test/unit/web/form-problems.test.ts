// A refused form's problems placed at its controls (web/src/lib/form-problems.ts), from the
// gateway's error envelope as the client receives it.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../web/src/lib/client.ts';
import { channelControl, labelOf, reminderControl, ruleControl } from '../../../web/src/lib/admin/notice-fields.ts';
import { placeProblems, problemsOf } from '../../../web/src/lib/form-problems.ts';

const invalid = (details: Record<string, unknown>, message = 'the request is not valid') => new ApiError(400, { code: 'invalid_request', message, details });
const CONTROLS: Record<string, string> = { 'slack.bot_token': 'slack-token', 'slack.signing_secret': 'slack-secret', name: 'notice-name' };
const LABELS: Record<string, string> = { 'slack-token': 'Bot token', 'slack-secret': 'Signing secret', 'notice-name': 'Channel name' };
const place = (err: unknown) => placeProblems(problemsOf(err, 'Not added.'), (f) => CONTROLS[f] ?? null, (id) => LABELS[id] ?? id);

describe('problems of a refused form', () => {
  it('places each validation issue at its control and names them all in the summary', () => {
    const err = invalid({
      issues: [
        { path: 'slack.bot_token', message: 'must be a Slack bot token (xoxb-…)', code: 'invalid_format' },
        { path: 'slack.signing_secret', message: "must be the app's signing secret (hex)", code: 'invalid_format' },
      ],
    });
    expect(place(err)).toEqual({
      fields: { 'slack-token': 'must be a Slack bot token (xoxb-…)', 'slack-secret': "must be the app's signing secret (hex)" },
      summary: "Bot token: must be a Slack bot token (xoxb-…); Signing secret: must be the app's signing secret (hex)",
    });
  });

  it('takes the one field a service names (`details.field`, brackets or dots) with the message', () => {
    expect(place(new ApiError(409, { code: 'conflict', message: 'a channel named "Mail" already exists', details: { field: 'name' } }))).toEqual({
      fields: { 'notice-name': 'a channel named "Mail" already exists' },
      summary: 'Channel name: a channel named "Mail" already exists',
    });
    expect(problemsOf(invalid({ field: 'rules[2].routes[0].channel_id' }, 'no such channel'), 'x')).toEqual([{ field: 'rules.2.routes.0.channel_id', message: 'no such channel' }]);
  });

  it('names a field without a control by its API path, and a failure without fields by its message', () => {
    expect(place(invalid({ issues: [{ path: 'slack.extra', message: 'Unrecognized key' }] }))).toEqual({ fields: {}, summary: 'slack.extra: Unrecognized key' });
    expect(place(new ApiError(403, { code: 'forbidden', message: 'only org admins manage notices' }))).toEqual({ fields: {}, summary: 'only org admins manage notices' });
    expect(place(new TypeError('Failed to fetch'))).toEqual({ fields: {}, summary: 'Failed to fetch' });
  });

  it("reads a call's parameter problems (`details.problems`) too", () => {
    expect(problemsOf(invalid({ problems: [{ field: 'amount', message: 'must be integer' }] }, 'the action parameters are not valid'), 'x')).toEqual([{ field: 'amount', message: 'must be integer' }]);
  });
});

describe('the notice settings forms', () => {
  it("place a new rule's fields at its controls, and leave other rules' to the summary", () => {
    const control = ruleControl(2);
    expect(control('rules.2.match.service.0')).toBe('rule-service');
    expect(control('rules.2.routes.0.channel_id')).toBe('rule-channel');
    expect(control('rules.0.name')).toBeNull();
    expect(channelControl('slack.bot_token')).toBe('slack-token');
    expect(reminderControl('reminders.1')).toBe('reminders');
    expect(labelOf('rule-service')).toBe('Service');
  });
});
