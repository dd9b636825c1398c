// The parts of node-oidc-provider 9 the gateway uses (the package ships no types). Kept narrow on
// purpose: anything not declared here is not relied upon.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** What the adapter stores: the model's payload, plus the secondary keys it may carry. */
  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    userCode?: string;
    uid?: string;
    /** Set by the adapter when consumed (epoch seconds). */
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Client {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
    applicationType: 'web' | 'native';
    clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
    metadata(): Record<string, unknown>;
  }

  export interface Grant {
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(ttl?: number): Promise<string>;
    destroy(): Promise<void>;
  }

  /** An AccessToken, AuthorizationCode or RefreshToken as handed to configuration callbacks. */
  export interface Token {
    jti: string;
    kind: string;
    accountId: string;
    clientId: string;
    grantId: string;
    scope?: string;
    resourceServer?: { audience?: string };
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string, claims: unknown, rejected: string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface OIDCContext {
    readonly route: string;
    readonly issuer: string;
    readonly client?: Client;
    readonly session?: { accountId?: string };
    readonly params?: Record<string, unknown>;
    readonly result?: { consent?: { grantId?: string }; login?: { accountId: string } };
    readonly resourceServers: Record<string, unknown>;
    readonly requestParamScopes: Set<string>;
    readonly requestParamOIDCScopes: Set<string>;
    readonly provider: Provider;
  }

  export interface KoaContextWithOIDC {
    oidc: OIDCContext;
    cookies: { get(name: string, opts?: { signed?: boolean }): string | undefined };
    method: string;
    path: string;
    status: number;
    body: unknown;
    type: string;
    set(field: string, value: string): void;
  }

  export interface InteractionDetails {
    uid: string;
    returnTo: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; scope?: string; resource?: string | string[]; redirect_uri?: string };
    session?: { accountId: string; uid?: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
  }

  export type InteractionResult =
    | { login: { accountId: string } }
    | { consent: { grantId: string } }
    | { error: string; error_description?: string };

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    readonly Grant: { new (init: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
    readonly Client: { find(id: string): Promise<Client | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(fn: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
    on(event: 'server_error', fn: (ctx: KoaContextWithOIDC, err: Error) => void): this;
    pathFor(name: string): string;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: InteractionResult, opts?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
  export default Provider;

  export class OIDCProviderError extends Error {
    error: string;
    error_description?: string;
    status: number;
  }
  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidGrant: new (detail?: string) => OIDCProviderError;
    InvalidTarget: new (description?: string) => OIDCProviderError;
    InvalidClientMetadata: new (description: string) => OIDCProviderError;
    AccessDenied: new (description?: string) => OIDCProviderError;
    SessionNotFound: new (description?: string) => OIDCProviderError;
  };

  export class Check {
    constructor(reason: string, description: string, check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>);
  }
  export interface Prompt {
    name: string;
    checks: Check[] & { add(check: Check, index?: number): void };
  }
  export const interactionPolicy: {
    base(): Prompt[] & { get(name: string): Prompt | undefined };
    Check: typeof Check & { REQUEST_PROMPT: true; NO_NEED_TO_PROMPT: false };
  };
}
