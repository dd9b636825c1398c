// Where the notice settings forms show what the gateway says of a field: the API's field (as
// web/src/lib/form-problems.ts names it) → the id of the control, and each control's label.

const LABELS: Record<string, string> = {
  'notice-name': 'Channel name',
  'slack-channel': 'Slack channel to post in',
  'slack-token': 'Bot token',
  'slack-secret': 'Signing secret',
  'smtp-host': 'SMTP host',
  'smtp-port': 'Port',
  'smtp-user': 'SMTP user',
  'smtp-password': 'SMTP password',
  'smtp-from': 'From address',
  'rule-name': 'Rule name',
  'rule-risk': 'Risk',
  'rule-service': 'Service',
  'rule-channel': 'Send to channel',
  'rule-to': 'Who',
  reminders: 'Remind the resolver at',
};
const CHANNEL_FIELDS: Record<string, string> = {
  name: 'notice-name',
  'slack.channel': 'slack-channel',
  'slack.bot_token': 'slack-token',
  'slack.signing_secret': 'slack-secret',
  'email.host': 'smtp-host',
  'email.port': 'smtp-port',
  'email.user': 'smtp-user',
  'email.password': 'smtp-password',
  'email.from': 'smtp-from',
};
const RULE_FIELDS: [RegExp, string][] = [
  [/^name$/, 'rule-name'],
  [/^match\.risk(\.|$)/, 'rule-risk'],
  [/^match\.service(\.|$)/, 'rule-service'],
  [/^routes\.0\.channel_id$/, 'rule-channel'],
  [/^routes\.0\.to$/, 'rule-to'],
];

export const labelOf = (controlId: string): string => LABELS[controlId] ?? controlId;

export const channelControl = (field: string): string | null => CHANNEL_FIELDS[field] ?? null;

/** The rule being added is the last of the list sent (at `index`): only its fields are the form's. */
export const ruleControl =
  (index: number) =>
  (field: string): string | null => {
    const own = new RegExp(`^rules\\.${index}\\.(.+)$`).exec(field)?.[1];
    return own === undefined ? null : (RULE_FIELDS.find(([re]) => re.test(own))?.[1] ?? null);
  };

export const reminderControl = (field: string): string | null => (field === 'reminders' || field.startsWith('reminders.') ? 'reminders' : null);
