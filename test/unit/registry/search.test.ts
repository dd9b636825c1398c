import { describe, expect, it } from 'vitest';
import { buildSearchSegment, searchActions, words, type SearchRow } from '../../../core/registry/search.ts';

const row = (service: string, action: string, summary: string, description?: string): SearchRow => ({
  service,
  template: service.replace(/-.*/, ''),
  action,
  summary,
  ...(description ? { description } : {}),
  risk: 'read',
  authStatus: 'connected',
});

const rows: SearchRow[] = [
  row('slack', 'chat.postMessage', 'Post a message to {channel}'),
  row('slack', 'conversations.list', 'List channels'),
  row('slack-work', 'chat.postMessage', 'Post a message to {channel}'),
  row('github', 'issues.create', 'Open an issue in {repo}', 'Creates a GitHub issue; posts a notification'),
  row('github', 'issues.list', 'List issues'),
  row('gmail', 'messages.send', 'Send an email', 'Delivers a message to recipients'),
  row('postmark', 'email.send', 'Send a transactional email'),
];
const index = [buildSearchSegment(rows)];
const keys = (q: string, limit = 10) => searchActions(index, q, limit).map((h) => `${h.row.service}:${h.row.action}`);

describe('searchActions', () => {
  it('splits names into words', () => {
    expect(words('chat.postMessage')).toEqual(['chat', 'post', 'message']);
    expect(words('Open an issue in {repo}')).toEqual(['open', 'an', 'issue', 'in', 'repo']);
  });

  it('returns the first rows in a stable (service, action) order for an empty query', () => {
    expect(keys('', 3)).toEqual(['github:issues.create', 'github:issues.list', 'gmail:messages.send']);
    expect(keys('   ', 3)).toEqual(keys('', 3));
    expect(searchActions([buildSearchSegment([...rows].reverse())], '', 3).map((h) => h.row.action)).toEqual(['issues.create', 'issues.list', 'messages.send']);
  });

  it('ranks an exact name above a prefix above a substring', () => {
    // "github" is an exact service name; "git" only a prefix; "hub" only a substring
    const exact = searchActions(index, 'github', 10)[0]?.score ?? 0;
    const prefix = searchActions(index, 'git', 10)[0]?.score ?? 0;
    const substring = searchActions(index, 'hub', 10)[0]?.score ?? 0;
    expect(exact).toBeGreaterThan(prefix);
    expect(prefix).toBeGreaterThan(substring);
    expect(substring).toBeGreaterThan(0);
  });

  it('ranks name matches above summary and description matches', () => {
    // "post": action word for chat.postMessage and service prefix of postmark; only prose for issues.create
    const hits = keys('post');
    expect(hits.slice(0, 3).sort()).toEqual(['postmark:email.send', 'slack-work:chat.postMessage', 'slack:chat.postMessage']);
    expect(hits.at(-1)).toBe('github:issues.create');
  });

  it('prefers rows matching more query words', () => {
    expect(keys('slack post')[0]).toBe('slack:chat.postMessage');
    expect(keys('send email')).toEqual(['postmark:email.send', 'gmail:messages.send']);
    expect(keys('github list')[0]).toBe('github:issues.list');
  });

  it('boosts an exact action name query', () => {
    expect(keys('issues.create')[0]).toBe('github:issues.create');
    expect(keys('SLACK.chat.postMessage')[0]).toBe('slack:chat.postMessage');
  });

  it('is case-insensitive, honours the limit and skips non-matches', () => {
    expect(keys('CHANNELS')).toEqual(['slack:conversations.list']);
    expect(keys('message', 1)).toHaveLength(1);
    expect(keys('zzz')).toEqual([]);
    expect(keys('issue', 0)).toEqual([]);
  });
});
