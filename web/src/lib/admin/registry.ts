// Data for the services pages: the catalog (templates), instances, one service with its actions,
// custom templates as text, and "try it" (a call through the normal call path).
import { api, unwrap, type components } from '../client.ts';

export type Template = components['schemas']['Template'];
export type TemplateSource = components['schemas']['TemplateSource'];
export type ServiceInstance = components['schemas']['ServiceInstance'];
export type ServiceDetail = components['schemas']['ServiceDetail'];
export type ActionDescription = components['schemas']['ActionDescription'];
export type SearchResult = components['schemas']['SearchResult'];

export const listTemplates = async () => (await unwrap(api.GET('/v1/templates'))).templates;
export const listServices = async () => (await unwrap(api.GET('/v1/services'))).services;
export const getService = (name: string) => unwrap(api.GET('/v1/services/{name}', { params: { path: { name } } }));
export const searchActions = async (q: string) => (await unwrap(api.GET('/v1/search', { params: { query: { q, limit: 50 } } }))).results;

export const createService = (body: { name: string; template: string; scope: 'org' | 'user'; secret_name?: string; connection_id?: string }) =>
  unwrap(api.POST('/v1/services', { body }));
export const deleteService = (name: string) => unwrap(api.DELETE('/v1/services/{name}', { params: { path: { name } } }));

export const getTemplate = (id: string) => unwrap(api.GET('/v1/templates/{id}', { params: { path: { id } } }));
/** The document goes as text: the server parses it, and keeps it as written (comments included). */
export const createTemplate = (scope: 'org' | 'user', source: string) => unwrap(api.POST('/v1/templates', { body: { scope, document: source } }));
export const updateTemplate = (id: string, source: string) => unwrap(api.PUT('/v1/templates/{id}', { params: { path: { id } }, body: { document: source } }));
export const deleteTemplate = (id: string) => unwrap(api.DELETE('/v1/templates/{id}', { params: { path: { id } } }));

/** "Try it": the same POST /v1/actions/call an agent makes, as the signed-in person. */
export const callAction = (service: string, action: string, params: Record<string, unknown>) =>
  unwrap(api.POST('/v1/actions/call', { body: { service, action, params } }));

/** One problem of the registry's 422 `invalid_service_definition`. */
export interface Problem {
  code: string;
  path: string;
  message: string;
}

export function problemsOf(details: Record<string, unknown> | undefined): Problem[] {
  const list = details?.problems;
  if (!Array.isArray(list)) return [];
  return list.filter((p): p is Problem => typeof p === 'object' && p !== null && typeof (p as Problem).path === 'string' && typeof (p as Problem).message === 'string');
}
