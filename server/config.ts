// The one place the process reads its environment. Every variable is validated by zod; a bad
// value stops start-up with a single line that names the variable (see ConfigError).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseAllowlist } from '../core/execution/address-policy.ts';
import { hostPolicy, parseHostList, parseOriginList, type HostPolicy } from '../core/http/host-policy.ts';

const port = z.coerce
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be between 1 and 65535')
  .max(65535, 'must be between 1 and 65535');

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const envSchema = z.object({
  PORT: port.default(8080),
  /** The interface to listen on: unset = every interface (the container image says 0.0.0.0); `npm run cluster` binds 127.0.0.1. */
  HOST: optionalString.pipe(
    z
      .string()
      .regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, 'must be a hostname or an IP address')
      .optional(),
  ),
  PUBLIC_URL: optionalString.pipe(
    z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
      .optional(),
  ),
  DATA_DIR: z.string().trim().min(1).default('./.data'),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
  ),
  /** Named prepared statements on the call path (server/db/prepared.ts); off behind a pooler that cannot carry them. */
  DATABASE_PREPARED_STATEMENTS: z.enum(['true', 'false', '1', '0']).default('true').transform((v) => v === 'true' || v === '1'),
  TEMPORAL_ADDRESS: optionalString.pipe(
    z
      .string()
      .regex(/^[^\s:/]+:\d+$/, 'must be host:port')
      .optional(),
  ),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
  // Several gateways on one Temporal server (tests, the chaos benchmark) each need their own queue.
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('gateway-actions'),
  TEMPORAL_CLI_PATH: optionalString,
  // A workflow bundle built beforehand from this same code, run instead of bundling at start (a
  // test harness that starts many gateways from one checkout builds it once). Unset: bundled.
  TEMPORAL_WORKFLOW_BUNDLE: optionalString.pipe(
    z
      .string()
      .refine((p) => statSync(p, { throwIfNoEntry: false })?.isFile() === true, 'must be the path of a workflow bundle file')
      .optional(),
  ),
  // Register missing search attributes in the namespace at start (operator API); false: only check.
  TEMPORAL_REGISTER_SEARCH_ATTRIBUTES: z.enum(['true', 'false', '1', '0']).default('true').transform((v) => v === 'true' || v === '1'),
  // 32 bytes, base64 or hex. Generated into DATA_DIR when absent outside production.
  GATEWAY_MASTER_KEY: optionalString.pipe(
    z
      .string()
      .refine((v) => decodeMasterKey(v) !== null, 'must be 32 bytes as base64 or 64 hex characters')
      .optional(),
  ),
  GATEWAY_ADMIN_EMAIL: optionalString.pipe(z.email({ error: 'must be an email address' }).optional()),
  GATEWAY_ADMIN_PASSWORD: optionalString.pipe(
    z.string().min(12, 'must be at least 12 characters').optional(),
  ),
  SERVICES_DIR: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: readable lines on a terminal, JSON lines otherwise (server/log-format.ts).
  LOG_FORMAT: optionalString.pipe(z.enum(['json', 'pretty'], { error: 'must be json or pretty' }).optional()),
  // Prometheus metrics on their own listener (server/metrics/); 0 turns it off.
  METRICS_PORT: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, 'must be 0 (off) or between 1 and 65535')
    .max(65535, 'must be 0 (off) or between 1 and 65535')
    .default(9464),
  METRICS_HOST: z
    .string()
    .trim()
    .regex(/^(?:[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, 'must be a hostname or an IP address')
    .default('127.0.0.1'),
  // OpenTelemetry traces (server/telemetry/): exported by OTLP/HTTP only when an endpoint is set.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).optional()),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('agent-gateway'),
  // Whether the outbound request to an upstream carries the trace's `traceparent` (off: the trace stays ours).
  OTEL_PROPAGATE_UPSTREAM: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  TEMPORAL_PORT: port.default(7233),
  // Outbound safety and limits (DESIGN.md §5).
  OUTBOUND_ALLOW_PRIVATE: z.enum(['true', 'false', '1', '0']).default('false').transform((v) => v === 'true' || v === '1'),
  OUTBOUND_ALLOWLIST: optionalString,
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  UPSTREAM_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024 * 1024).default(10 * 1024 * 1024),
  // Connected MCP servers are re-listed this often (minutes, fractions allowed; 0: only on list_changed and refresh).
  MCP_SERVER_RELIST_MINUTES: z.coerce.number().min(0).max(7 * 24 * 60).default(15),
  GATEWAY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(60),
  GATEWAY_EAGER_ANSWER_PATIENCE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  // After an allow, the call must start within this window (spec: 15 minutes).
  GATEWAY_EXECUTION_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  // Approval notices (Slack, email): the first retry's wait and the attempts before a delivery is failed.
  GATEWAY_NOTICE_RETRY_INITIAL_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
  GATEWAY_NOTICE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(6),
  // The Slack Web API's base URL (tests point it at a loopback fake).
  GATEWAY_SLACK_API_URL: z.url({ protocol: /^https?$/ }).default('https://slack.com/api'),
  TEMPORAL_UI_PORT: port.default(8233),
  // Extra Host names and browser Origins /mcp answers besides PUBLIC_URL's (DNS-rebinding guard).
  ALLOWED_HOSTS: optionalString.pipe(z.string().refine(listOk(parseHostList), { error: (i) => listError(parseHostList, i.input) }).optional()),
  ALLOWED_ORIGINS: optionalString.pipe(z.string().refine(listOk(parseOriginList), { error: (i) => listError(parseOriginList, i.input) }).optional()),
});

function listOk(parse: (v: string) => unknown) {
  return (v: string) => {
    try {
      parse(v);
      return true;
    } catch {
      return false;
    }
  };
}

function listError(parse: (v: string) => unknown, input: unknown): string {
  try {
    parse(String(input));
    return 'is invalid';
  } catch (err) {
    return `is invalid: ${(err as Error).message}`;
  }
}

export type Env = z.infer<typeof envSchema>;

/** Every variable the gateway reads (what `npm run cluster` passes through to its replicas). */
export const GATEWAY_ENV_NAMES: readonly string[] = Object.keys(envSchema.shape);

export interface Config {
  port: number;
  /** Interface to listen on (undefined: all). */
  host: string | undefined;
  publicUrl: string;
  /** Host / Origin headers accepted at /mcp. */
  hostPolicy: HostPolicy;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePreparedStatements: boolean;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    cliPath: string | undefined;
    /** A prebuilt workflow bundle (TEMPORAL_WORKFLOW_BUNDLE); undefined: bundled at start. */
    workflowBundlePath: string | undefined;
    /** gRPC port of the embedded dev server. */
    port: number;
    uiPort: number;
    /** Register the gateway's search attributes when the namespace lacks them. */
    registerSearchAttributes: boolean;
  };
  masterKey: Buffer | undefined;
  admin: { email: string | undefined; password: string | undefined };
  /** Built-in services first, then every SERVICES_DIR entry in order. */
  serviceDirs: string[];
  executionWindowSeconds: number;
  /** Approval notices: retry policy of one delivery, and the Slack Web API base URL. */
  notices: { retryInitialMs: number; maxAttempts: number; slackApiUrl: string };
  outbound: { allowPrivate: boolean; allowHosts: Set<string>; timeoutMs: number; maxResponseBytes: number; propagateTrace: boolean };
  mcpServerRelistMinutes: number;
  /** Calls per minute per agent (token bucket); 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** How long an eagerly started call waits for its in-process answer before also asking its workflow. */
  eagerAnswerPatienceMs: number;
  logLevel: Env['LOG_LEVEL'];
  /** Unset: chosen by whether stdout is a terminal (server/log-format.ts). */
  logFormat: Env['LOG_FORMAT'];
  /** The Prometheus listener; null: off (METRICS_PORT=0). */
  metrics: { port: number; host: string } | null;
  /** OpenTelemetry traces; null: off (no OTEL_EXPORTER_OTLP_ENDPOINT), nothing started. */
  tracing: { endpoint: string; serviceName: string } | null;
  production: boolean;
  nodeEnv: Env['NODE_ENV'];
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export function decodeMasterKey(value: string): Buffer | null {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    const buf = Buffer.from(v, 'base64');
    if (buf.length === 32) return buf;
  }
  return null;
}

const builtinServicesDir = path.resolve(import.meta.dirname, '..', 'services');

/**
 * Secrets that may come from a file instead (`<NAME>_FILE`, as Docker and Kubernetes secrets are
 * mounted). Their values are never repeated in an error.
 */
export const FILE_VARIABLES = ['GATEWAY_MASTER_KEY', 'DATABASE_URL', 'GATEWAY_ADMIN_PASSWORD'] as const;

/** `env` with each `<NAME>_FILE` read into `<NAME>`; both set, or an unreadable file, is a ConfigError. */
export function withFileVariables(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; fromFile: Set<string> } {
  const out: NodeJS.ProcessEnv = { ...env };
  const fromFile = new Set<string>();
  for (const name of FILE_VARIABLES) {
    const file = env[`${name}_FILE`]?.trim();
    if (!file) continue;
    if (env[name]?.trim()) throw new ConfigError(`${name}_FILE`, `and ${name} are both set: set only one of them`);
    try {
      // A file written by `echo` or an editor ends with a newline that is not part of the secret.
      out[name] = readFileSync(file, 'utf8').replace(/[\r\n]+$/, '');
    } catch (err) {
      throw new ConfigError(`${name}_FILE`, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${file})`);
    }
    fromFile.add(name);
  }
  return { env: out, fromFile };
}

export function loadConfig(processEnv: NodeJS.ProcessEnv = process.env): Config {
  const { env, fromFile } = withFileVariables(processEnv);
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const raw = env[variable];
    const secret = (FILE_VARIABLES as readonly string[]).includes(variable);
    const got = fromFile.has(variable) ? ` (read from ${variable}_FILE)` : raw !== undefined && !secret ? ` (got ${JSON.stringify(raw)})` : '';
    throw new ConfigError(variable, `${issue.message}${got}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const masterKey = e.GATEWAY_MASTER_KEY ? decodeMasterKey(e.GATEWAY_MASTER_KEY)! : undefined;
  if (production && !masterKey) {
    throw new ConfigError('GATEWAY_MASTER_KEY', 'is required when NODE_ENV=production (or GATEWAY_MASTER_KEY_FILE)');
  }
  const extraDirs = (e.SERVICES_DIR ?? '')
    .split(':')
    .map((d) => d.trim())
    .filter(Boolean)
    .map((d) => path.resolve(d));
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST?.replace(/^\[|\]$/g, ''),
    publicUrl,
    hostPolicy: hostPolicy(publicUrl, parseHostList(e.ALLOWED_HOSTS), parseOriginList(e.ALLOWED_ORIGINS)),
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      workflowBundlePath: e.TEMPORAL_WORKFLOW_BUNDLE && path.resolve(e.TEMPORAL_WORKFLOW_BUNDLE),
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      registerSearchAttributes: e.TEMPORAL_REGISTER_SEARCH_ATTRIBUTES,
    },
    masterKey,
    admin: { email: e.GATEWAY_ADMIN_EMAIL, password: e.GATEWAY_ADMIN_PASSWORD },
    serviceDirs: [builtinServicesDir, ...extraDirs],
    executionWindowSeconds: e.GATEWAY_EXECUTION_WINDOW_SECONDS,
    notices: { retryInitialMs: e.GATEWAY_NOTICE_RETRY_INITIAL_MS, maxAttempts: e.GATEWAY_NOTICE_MAX_ATTEMPTS, slackApiUrl: e.GATEWAY_SLACK_API_URL.replace(/\/+$/, '') },
    outbound: {
      allowPrivate: e.OUTBOUND_ALLOW_PRIVATE,
      allowHosts: parseAllowlist(e.OUTBOUND_ALLOWLIST),
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
      propagateTrace: e.OTEL_PROPAGATE_UPSTREAM && e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
    },
    mcpServerRelistMinutes: e.MCP_SERVER_RELIST_MINUTES,
    rateLimitPerMinute: e.GATEWAY_RATE_LIMIT_PER_MINUTE,
    eagerAnswerPatienceMs: e.GATEWAY_EAGER_ANSWER_PATIENCE_MS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    metrics: e.METRICS_PORT === 0 ? null : { port: e.METRICS_PORT, host: e.METRICS_HOST.replace(/^\[|\]$/g, '') },
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME } : null,
    production,
    nodeEnv: e.NODE_ENV,
  };
}
