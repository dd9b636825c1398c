// One definition per REST route: method, path, request schemas, responses, error codes and the
// handler. `route()` mounts the handler on an Express router and records the definition, which is
// what GET /v1/openapi.json is built from (server/http/openapi/document.ts); so a /v1 route cannot
// exist without its entry in the document. The router validates the request's path parameters,
// query and body with the schemas the definition names and hands the handler what they parsed, so
// the document describes exactly what is validated and no handler parses its input again.
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { ErrorCode } from '../errors.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call: nobody needs a credential, any bearer (session, agent key, OAuth token), or people only. */
export type RouteAuth = 'none' | 'any' | 'human';

/** A response: a zod schema (JSON), `null` (no content), or a non-JSON description. */
export type ResponseSpec =
  | z.ZodType
  | null
  | { description: string; contentType?: string | readonly string[]; schema?: z.ZodType; headers?: Record<string, string> };

export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI path template relative to the router's base, e.g. `/identities/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: readonly string[];
  /** Default `any`. Documentation of what the mounted middleware enforces. */
  auth?: RouteAuth;
  params?: z.ZodObject;
  query?: z.ZodType;
  /** Request headers the route reads (documented as header parameters; names in their canonical case). */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be omitted (the router then parses `{}`). */
  bodyOptional?: boolean;
  /** Media type of the body; default application/json. */
  bodyType?: string;
  /** Success responses by status. */
  responses: Record<number, ResponseSpec>;
  /** Error codes this route answers besides the ones every route can (see document.ts). */
  errors?: ErrorCode[];
  /** Browsers (Accept: text/html) get errors as a page too. */
  htmlErrors?: boolean;
  /** `oauth`: the RFC 6749 error bodies, listed in `responses`, instead of the /v1 envelope. */
  errorStyle?: 'envelope' | 'oauth';
  /**
   * The handler validates its own input (the schemas document it): for a route whose invalid input
   * has its own answer, e.g. a page for a browser or a 404 that does not tell a bad id from a
   * missing one.
   */
  validatesItself?: true;
}

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What the router validated: the path parameters, query and body, as the spec's schemas parsed them. */
export interface RouteInput<S extends OperationSpec> {
  params: Parsed<S['params']>;
  query: Parsed<S['query']>;
  body: Parsed<S['body']>;
}

export type RouteHandler<S extends OperationSpec> = (req: Request, res: Response, input: RouteInput<S>) => unknown;

/** Parses what the spec names (a ZodError becomes the usual 400 `invalid_request`); `validatesItself` routes get nothing parsed. */
function inputOf<S extends OperationSpec>(spec: S, req: Request): RouteInput<S> {
  if (spec.validatesItself) return { params: undefined, query: undefined, body: undefined } as RouteInput<S>;
  return {
    params: spec.params?.parse(req.params),
    query: spec.query?.parse(req.query),
    body: spec.body?.parse(spec.bodyOptional ? (req.body ?? {}) : req.body),
  } as RouteInput<S>;
}

export interface ApiRouter {
  router: Router;
  operations: OperationSpec[];
  /** Mount `handler` and record `spec`; the handler gets the input `spec` validated. */
  route<const S extends OperationSpec>(spec: S, handler: RouteHandler<S>): void;
  /** Middleware for requests under `paths` (e.g. a role check for a group of routes). */
  use(paths: string | string[], ...handlers: RequestHandler[]): void;
}

const OPERATIONS = Symbol('operations');
/** The first path segments (lower case) a router made by `apiRouter` answers under, and its layer count. */
const SEGMENTS = Symbol('segments');

type Recorded = { [OPERATIONS]?: OperationSpec[]; [SEGMENTS]?: { segments: Set<string>; layers: number } };

/** `/actions/call` → `actions` (Express matches paths case-insensitively). Run by every gate a request passes. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** `{id}` → `:id` (Express 5 path syntax). */
export const toExpressPath = (template: string) => template.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

export function apiRouter(defaults: { tags?: string[]; auth?: RouteAuth } = {}): ApiRouter {
  const router = Router();
  const operations: OperationSpec[] = [];
  const gate = { segments: new Set<string>(), layers: 0 };
  Object.assign(router, { [OPERATIONS]: operations, [SEGMENTS]: gate });
  return {
    router,
    operations,
    route(spec, handler) {
      operations.push({ ...spec, tags: spec.tags ?? defaults.tags ?? [], auth: spec.auth ?? defaults.auth ?? 'any' });
      gate.segments.add(firstSegment(spec.path));
      gate.layers++;
      router[spec.method](toExpressPath(spec.path), async (req, res) => {
        await handler(req, res, inputOf(spec, req));
      });
    },
    use(paths, ...handlers) {
      for (const p of typeof paths === 'string' ? [paths] : paths) gate.segments.add(firstSegment(p));
      gate.layers += handlers.length; // one layer per handler
      router.use(paths, ...handlers);
    },
  };
}

/**
 * The router, entered only by requests whose first path segment is one its routes and middleware
 * are under. Without it a request walks every router mounted before its own, matching each of
 * their routes' patterns in turn (a covered call passed ~200 of them). A layer added to the
 * router behind `apiRouter`'s back would be skipped unseen, so it is refused here, at start-up.
 */
export function onlyItsPaths(router: Router): RequestHandler {
  const gate = (router as Router & Recorded)[SEGMENTS];
  if (!gate) throw new Error('onlyItsPaths takes a router made by apiRouter');
  if (router.stack.length !== gate.layers) throw new Error(`a router has ${router.stack.length - gate.layers} layer(s) added outside apiRouter's route() and use(): they would never be reached`);
  const gated = (req: Request, res: Response, next: NextFunction) => {
    if (!gate.segments.has(firstSegment(req.path))) return next();
    router(req, res, next);
  };
  // Listed as the router it gates (Express's `listRoutes()` descends into a handler with a `stack`).
  return Object.assign(gated, { stack: router.stack, listRoutes: () => (router as Router & { listRoutes(): unknown[] }).listRoutes() });
}

/** The definitions recorded on a router made by `apiRouter` (empty for a plain router). */
export function operationsOf(router: unknown): OperationSpec[] {
  return (router as Recorded)[OPERATIONS] ?? [];
}
