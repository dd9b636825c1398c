// The authorization server's JSON endpoints in the OpenAPI document. oidc-provider serves them
// (server/oauth/server.ts), so these definitions describe, and do not mount, them; their errors
// are the RFC 6749 `{error, error_description}` bodies, not the /v1 envelope.
import { z } from 'zod';
import type { OperationSpec } from '../http/api-router.ts';
import { ErrorEnvelope } from '../http/openapi/common.ts';

const OAuthError = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 error (RFC 7591 §3.2.2 for registration).' });

const oauthError = (description: string) => ({ description, contentType: 'application/json', schema: OAuthError });
/** Our own middleware in front of the provider (body limits, JSON parsing) answers with the envelope. */
const badRequest = { description: 'RFC error, or the /v1 envelope when the body is not parsable', contentType: 'application/json', schema: z.union([OAuthError, ErrorEnvelope]) };

const ClientMetadata = z
  .looseObject({
    redirect_uris: z.array(z.string()).min(1),
    client_name: z.string().max(255).optional(),
    software_id: z.string().max(255).optional(),
    software_version: z.string().max(255).optional(),
    token_endpoint_auth_method: z.literal('none').optional(),
    grant_types: z.array(z.string()).optional(),
    response_types: z.array(z.string()).optional(),
    scope: z.string().optional(),
    application_type: z.enum(['web', 'native']).optional(),
  })
  .describe('RFC 7591 client metadata. Clients are public: no secret is ever issued.');

const RegisteredClient = z.looseObject({
  client_id: z.string(),
  client_id_issued_at: z.int().optional(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: z.literal('none'),
});

const TokenRequest = z.object({
  grant_type: z.enum(['authorization_code', 'refresh_token']),
  client_id: z.string(),
  code: z.string().optional(),
  code_verifier: z.string().optional(),
  redirect_uri: z.string().optional(),
  refresh_token: z.string().optional(),
  resource: z.string().optional(),
  scope: z.string().optional(),
});

const TokenResponse = z.looseObject({
  access_token: z.string(),
  token_type: z.string(),
  expires_in: z.int(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
});

const RevokeRequest = z.object({
  token: z.string(),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: z.string(),
});

const ServerMetadata = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  registration_endpoint: z.string(),
  revocation_endpoint: z.string(),
  jwks_uri: z.string(),
  scopes_supported: z.array(z.string()),
  response_types_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
});

const ResourceMetadata = z.strictObject({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  resource_name: z.string(),
});

const common: Pick<OperationSpec, 'tags' | 'auth' | 'errorStyle'> = { tags: ['OAuth authorization server'], auth: 'none', errorStyle: 'oauth' };

export const OAUTH_OPERATIONS: OperationSpec[] = [
  {
    ...common,
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    operationId: 'oauthServerMetadata',
    summary: 'RFC 8414 authorization server metadata',
    responses: { 200: ServerMetadata },
  },
  {
    ...common,
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    operationId: 'oauthProtectedResourceMetadata',
    summary: 'RFC 9728 protected resource metadata (the MCP endpoint)',
    responses: { 200: ResourceMetadata },
  },
  {
    ...common,
    method: 'get',
    path: '/oauth/jwks',
    operationId: 'oauthJwks',
    summary: 'Public keys that verify access tokens',
    responses: {
      200: { description: 'RFC 7517 JWK set', contentType: 'application/jwk-set+json', schema: z.looseObject({ keys: z.array(z.looseObject({ kty: z.string() })) }) },
    },
  },
  {
    ...common,
    method: 'post',
    path: '/oauth/register',
    operationId: 'oauthRegister',
    summary: 'RFC 7591 dynamic client registration (open; public clients)',
    body: ClientMetadata,
    responses: { 201: RegisteredClient, 400: badRequest, 413: badRequest },
  },
  {
    ...common,
    method: 'post',
    path: '/oauth/token',
    operationId: 'oauthToken',
    summary: 'Exchange an authorization code (with the PKCE verifier) or a refresh token',
    body: TokenRequest,
    bodyType: 'application/x-www-form-urlencoded',
    responses: { 200: TokenResponse, 400: oauthError('invalid_request, invalid_grant, unsupported_grant_type, …'), 401: oauthError('invalid_client') },
  },
  {
    ...common,
    method: 'post',
    path: '/oauth/revoke',
    operationId: 'oauthRevoke',
    summary: 'RFC 7009 token revocation',
    body: RevokeRequest,
    bodyType: 'application/x-www-form-urlencoded',
    responses: { 200: { description: 'Revoked, or nothing to revoke (RFC 7009 §2.2)' }, 400: oauthError('invalid_request, unsupported_token_type'), 401: oauthError('invalid_client') },
  },
];
