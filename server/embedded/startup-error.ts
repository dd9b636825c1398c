// A start-up problem the operator must fix (not a bug): the command prints its one-line message
// and exits with EX_CONFIG (78), like a bad configuration value.
export class StartupError extends Error {
  readonly exitCode = 78;
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The one line for a port some other process holds, naming the variable that chooses it. */
export function portInUseError(variable: string, port: number): StartupError {
  return new StartupError(`${variable} ${port} is in use by another process: set ${variable} to a free port`);
}

// Connection failures that mean "nothing usable at that address" (DNS, refused, unreachable, timed
// out) or "not let in": the operator's address or credentials, not a bug.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);
const POSTGRES_LOGIN_CODES: Readonly<Record<string, string>> = {
  '28P01': 'refused the password',
  '28000': 'refused the login',
  '3D000': 'has no such database',
};

/**
 * The one line for a DATABASE_URL that cannot be used, or null when `err` is something else.
 * Names only host and port: the URL carries the password.
 */
export function databaseUrlError(databaseUrl: string, err: unknown): StartupError | null {
  const code = errorCode(err);
  const where = describeDatabase(databaseUrl);
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) {
    return new StartupError(`DATABASE_URL: no PostgreSQL answers at ${where} (${code}): check DATABASE_URL`);
  }
  if (typeof code === 'string' && POSTGRES_LOGIN_CODES[code]) {
    return new StartupError(`DATABASE_URL: PostgreSQL at ${where} ${POSTGRES_LOGIN_CODES[code]} (${code}): check DATABASE_URL`);
  }
  return null;
}

/** The first `code` along an error's cause chain (slonik wraps the driver's error). */
function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function describeDatabase(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured address';
  }
}

/** The one line for a TEMPORAL_ADDRESS the client could not connect to. */
export function temporalAddressError(address: string, err: unknown): StartupError {
  const reason = ((err as Error)?.message ?? String(err)).split('\n')[0]!.slice(0, 200);
  return new StartupError(`TEMPORAL_ADDRESS ${address}: no Temporal frontend answers (${reason}): check TEMPORAL_ADDRESS`);
}

/** The one line for a listen that failed on `variable`'s port, or null for an unexpected error. */
/** `hostVariable`: the variable that named `host` (METRICS_HOST for the metrics listener). */
export function listenError(variable: string, port: number, host: string | undefined, err: unknown, hostVariable = 'HOST'): StartupError | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return portInUseError(variable, port);
  if (code === 'EACCES') return new StartupError(`${variable} ${port} may not be bound by this user: set ${variable} to a port above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new StartupError(`${hostVariable} ${host ?? ''} is not an address of this machine: set ${hostVariable} to one of its addresses`);
  return null;
}
