// The composition root: every domain service built once from the process's dependencies.
// Routes, MCP tools and the CLI receive these, never the pool or clients directly.
import { createMetrics, type GatewayMetrics } from './metrics/metrics.ts';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { createAuthService } from './auth/service.ts';
import type { Config } from './config.ts';
import { createIdentityService } from './identities/service.ts';
import type { Logger } from './logger.ts';
import { createVaultKeyring } from './vault/keyring.ts';
import { createMessageSigner } from './temporal/message-signer.ts';
import type { CallService } from './calls/service.ts';
import { createCallServiceOver } from './calls/wiring.ts';
import { createCallWorkflows } from './approvals/workflow-port.ts';
import { approvalViewReader } from './approvals/store.ts';
import { createOrgService } from './orgs/service.ts';
import { createDiagnosticsService } from './diagnostics/service.ts';
import type { ExecutorDeps } from './execution/execute.ts';
import type { Catalog } from '../core/registry/catalog.ts';
import type { TemporalHealth } from './temporal/health.ts';
import { createRegistryService } from './registry/service.ts';
import { createMcpServerService } from './mcp-servers/service.ts';
import { createVaultService } from './vault/service.ts';
import { createConnectionService } from './connections/service.ts';
import { createManualDeliveries } from './webhooks/manual.ts';
import { createWebhookService } from './webhooks/service.ts';
import { emitWebhookEvent } from './webhooks/emit.ts';
import { notifyCallProgress } from './events/agent-events.ts';
import { createAuditService } from './audit/service.ts';
import { createOAuthServer } from './oauth/server.ts';
import { createOAuthService } from './oauth/service.ts';
import { createAccessTokenVerifier } from './oauth/verify.ts';
import { createBlastRadiusService } from './approvals/blast-radius.ts';
import { createApprovalService } from './approvals/service.ts';
import { createApprovalEdits } from './approvals/edits.ts';
import { getCall } from './calls/store.ts';
import { coverageCheck } from './identities/chain-check.ts';
import { createCallDescriptions } from './approvals/descriptions.ts';
import { createLocalExchange } from './temporal/local-exchange.ts';
import { createCallCancels } from './events/call-cancels.ts';
import { createDownloadService } from './downloads/service.ts';
import { createEventService } from './events/service.ts';
import { createAuditReader } from './audit/readers.ts';
import { createAuditWriter } from './audit/writer.ts';
import { createIdentityReader } from './identities/readers.ts';
import { createOrgReader } from './orgs/readers.ts';
import { createNotices } from './notifications/notices.ts';
import { routedAnnouncer } from './notifications/start.ts';
import type { InvitationMailer } from './teams/mailer.ts';
import { createInvitationMailer } from './notifications/invitation-mail.ts';
import { createToolChangeNotifier } from './notifications/tool-change-notice.ts';
import { createApprovalRouting } from './teams/routing.ts';
import { createTeamService } from './teams/service.ts';
import { createSsoService } from './sso/service.ts';

export interface ServiceDeps {
  config: Config;
  logger: Logger;
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  masterKey: Buffer;
  /** Built-in templates, loaded once at start-up from config.serviceDirs. */
  catalog: Catalog;
  /** Whether Temporal answers (calls answer 503 at once while it does not). */
  temporalHealth?: TemporalHealth;
  /** Role `all`: a client on the local worker's connection, for eager starts (calls/service.ts). */
  eagerClient?: Client;
  /** Sends invitation links by email (issue 30's channels); absent: not configured. */
  invitationMailer?: InvitationMailer;
  /** This gateway's Prometheus metrics (server/metrics/); absent: counted into a registry nobody serves. */
  metrics?: GatewayMetrics;
  /**
   * The moment whose fixed budget windows calls are charged to and rules show (default: now). A
   * test pins it, so what it counts never straddles a window's edge.
   */
  budgetClock?: () => Date;
}

export function createServices(deps: ServiceDeps) {
  // One per process: the API side of the services and this process's worker hand each other calls and answers directly.
  const exchange = createLocalExchange();
  const metrics = deps.metrics ?? createMetrics();
  const budgetClock = deps.budgetClock ?? (() => new Date());
  const keyring = createVaultKeyring(deps.masterKey);
  // Every message to a call's workflow is signed with the installation's key (loaded on first use).
  const signer = createMessageSigner({ pool: deps.pool, keyring });
  // What one feature reads of another's tables: bound to the pool here, each consumer given only
  // the reads it uses (no module imports another feature's store for them).
  const identityReader = createIdentityReader(deps.pool);
  const orgReader = createOrgReader(deps.pool);
  // OAuth access tokens (the gateway's own authorization server) resolve to agent principals.
  const oauthTokens = createAccessTokenVerifier({ pool: deps.pool, publicUrl: deps.config.publicUrl });
  // Password sign-in may be off for an org that signs in with SSO (issue 29; bound below).
  const lateSso: { passwordSigninAllowed?: (orgId: string) => Promise<boolean> } = {};
  const auth = createAuthService({
    pool: deps.pool,
    identities: identityReader,
    verifyAccessToken: oauthTokens.verify,
    passwordSigninAllowed: (orgId) => lateSso.passwordSigninAllowed?.(orgId) ?? Promise.resolve(true),
  });
  const oauthServer = createOAuthServer({ config: deps.config, pool: deps.pool, keyring, auth, verifier: oauthTokens, logger: deps.logger, identities: identityReader });
  const oauth = createOAuthService({ pool: deps.pool });
  // Revoking an identity cancels its pending approvals through the calls' workflows (bound below).
  const late: { calls?: CallService } = {};
  const identities = createIdentityService({ pool: deps.pool, orgs: orgReader, budgetClock, closePendingOf: (ids, reason) => late.calls!.cancelPendingOf(ids, reason) });
  const registry = createRegistryService({ pool: deps.pool, catalog: deps.catalog });
  const vault = createVaultService({ pool: deps.pool, keyring });
  const connections = createConnectionService({ pool: deps.pool, keyring, vault, publicUrl: deps.config.publicUrl, logger: deps.logger });
  const webhooks = createWebhookService({
    pool: deps.pool,
    keyring,
    manual: createManualDeliveries({ temporal: deps.temporal, taskQueue: deps.taskQueue }),
  });
  const audit = createAuditService({ pool: deps.pool });
  const downloads = createDownloadService({ pool: deps.pool, identities: identityReader });
  // An agent's cancellation of a long MCP tool, from the replica that receives it to the worker sending the call.
  const callCancels = createCallCancels({ connectionUri: deps.pool.configuration.connectionUri, db: deps.pool, logger: deps.logger });
  // What every upstream call needs; secrets are resolved only inside the executor.
  const executor: ExecutorDeps = {
    secretValue: (orgId, name, userId) => vault.resolveSecretValue(orgId, name, userId),
    secretForUse: (orgId, name, userId) => vault.secretForUse(orgId, name, userId),
    secretWithBinding: (orgId, name, userId) => vault.resolveSecret(orgId, name, userId),
    openPrefetchedSecret: (envelope, userId) => vault.openCurrent(envelope, userId),
    connectionToken: (orgId, connectionId, requiredScopes) => connections.getFreshAccessToken({ orgId, id: connectionId }, { requiredScopes }),
    reportProgress: (to, progress) => notifyCallProgress(deps.pool, to, progress, deps.logger),
    onCancel: (to, abort) => callCancels.hold({ kind: 'send', agentId: to.requesterId, requestId: to.requestId }, abort),
    outbound: {
      policy: { allowPrivate: deps.config.outbound.allowPrivate, allowHosts: deps.config.outbound.allowHosts },
      timeoutMs: deps.config.outbound.timeoutMs,
      maxResponseBytes: deps.config.outbound.maxResponseBytes,
      propagateTrace: deps.config.outbound.propagateTrace,
    },
    saveDownload: async (d) => {
      const row = await downloads.save(d);
      return {
        id: row.id,
        url: `${deps.config.publicUrl}/v1/downloads/${row.id}`,
        content_type: row.content_type,
        size: row.size,
        sha256: row.sha256,
        expires_at: row.expires_at.toISOString(),
      };
    },
  };
  // Decisions and cancels reach a call's workflow through one port, signed and guarded.
  const callWorkflows = createCallWorkflows({
    temporal: deps.temporal,
    signer,
    temporalHealth: deps.temporalHealth,
    exchange,
    answersInProcess: deps.eagerClient !== undefined,
    answerPatienceMs: deps.config.eagerAnswerPatienceMs,
  });
  const calls = createCallServiceOver({
    pool: deps.pool,
    workflows: callWorkflows,
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    registry,
    keyring,
    masterKey: deps.masterKey,
    signer,
    config: deps.config,
    executor,
    ...(deps.temporalHealth ? { temporalHealth: deps.temporalHealth } : {}),
    connections,
    chains: { getChain: identityReader.getChain },
    orgs: { getOrg: orgReader.getOrg },
    logger: deps.logger,
    ...(deps.eagerClient ? { eagerClient: deps.eagerClient } : {}),
    exchange,
    metrics,
  });
  late.calls = calls;
  // An approver's edits and the viewer's descriptions derive requests with the calls' own preparer.
  const approvalEdits = createApprovalEdits({ calls: { getCall: (id) => getCall(deps.pool, id) }, covers: coverageCheck(deps.pool), keyring, registry, chains: { getChain: identityReader.getChain }, connections, preparer: calls.preparer });
  const describeFor = createCallDescriptions({ pool: deps.pool, keyring, registry, executor, preparer: calls.preparer });
  const orgs = createOrgService({ pool: deps.pool, rateLimitPerMinute: deps.config.rateLimitPerMinute });
  const diagnostics = createDiagnosticsService({ temporal: deps.temporal, pool: deps.pool, taskQueue: deps.taskQueue });
  // The people of an org and where an approval goes past its user (issue 29).
  // The new resolvers of a routed approval are announced once the notices exist (below).
  const lateNotices: { announce?: (orgId: string, approvalId: string, occasion: string) => Promise<void> } = {};
  const routing = createApprovalRouting({ pool: deps.pool, audit: createAuditWriter(deps.pool), logger: deps.logger, announce: async (o, a, occasion) => lateNotices.announce?.(o, a, occasion) });
  const teams = createTeamService({
    pool: deps.pool,
    publicUrl: deps.config.publicUrl,
    orgs: orgReader,
    // Invitations go out through the org's email channel when it has one (issue 30).
    mailer: deps.invitationMailer ?? createInvitationMailer({ pool: deps.pool, keyring }),
    logger: deps.logger,
    closePendingOf: (ids, reason) => calls.cancelPendingOf(ids, reason),
    rerouteFrom: routing.rerouteFrom,
    passwordSigninAllowed: (orgId) => lateSso.passwordSigninAllowed?.(orgId) ?? Promise.resolve(true),
  });
  const sso = createSsoService({ pool: deps.pool, audit: createAuditWriter(deps.pool), sessions: auth, publicUrl: deps.config.publicUrl, vault, teams, logger: deps.logger });
  lateSso.passwordSigninAllowed = sso.passwordSigninAllowed;
  const approvals = createApprovalService({
    views: approvalViewReader(deps.pool),
    workflows: callWorkflows,
    config: deps.config,
    calls: { ...approvalEdits, describeFor, settleWithoutWorkflow: calls.settleWithoutWorkflow },
    escalate: routing.escalate,
    metrics,
  });
  const blastRadius = createBlastRadiusService({ pool: deps.pool, identities: identityReader, audit: createAuditReader(deps.pool) });
  const events = createEventService({ pool: deps.pool });
  // Approval notices (Slack, email): their deliveries run in workflows; decisions come back through `approvals`.
  const notices = createNotices({ ...deps, keyring, approvals });
  lateNotices.announce = routedAnnouncer({ pool: deps.pool, logger: deps.logger, temporal: deps.temporal, taskQueue: deps.taskQueue, retry: notices.retry });
  // `chains`: identity chains for the agent-authority middleware (server/auth/authority.ts); no route gets it.
  // Connected MCP servers publish their tools as generated templates the registry reads.
  const toolChangeNotice = createToolChangeNotifier({ pool: deps.pool, keyring, logger: deps.logger, slackApiUrl: deps.config.notices.slackApiUrl });
  const mcpServers = createMcpServerService({
    pool: deps.pool,
    executor,
    audit: createAuditWriter(deps.pool),
    connections,
    publicUrl: deps.config.publicUrl,
    announce: async (orgId, data) => {
      // The admins' notices go on their own: a slow or failing channel never holds up the re-list.
      const notice = { serverId: data.server_id, service: data.service, changes: data.changes, reviewUrl: `${deps.config.publicUrl}/services/mcp-servers/${data.server_id}` };
      void toolChangeNotice(orgId, notice).catch((err: unknown) => deps.logger.warn({ org_id: orgId, server_id: data.server_id, error: (err as Error).message }, 'could not send the MCP tool change notice'));
      await emitWebhookEvent({ pool: deps.pool, temporal: deps.temporal, taskQueue: deps.taskQueue }, { orgId, type: 'mcp_server.tools_changed', data: { ...data } });
    },
  });
  return { exchange, callCancels, metrics, budgetClock, keyring, signer, auth, identities, registry, mcpServers, vault, connections, webhooks, audit, calls, approvals, notices, downloads, events, oauth, oauthServer, oauthTokens, executor, orgs, diagnostics, blastRadius, teams, routing, sso, chains: { getChain: identityReader.getChain } };
}

export type Services = ReturnType<typeof createServices>;
