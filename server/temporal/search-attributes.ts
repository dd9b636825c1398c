// The gateway's search attributes must exist in its Temporal namespace before any call starts a
// workflow (every call sets them; a namespace without them fails each call with "no mapping
// defined for search attribute"). The embedded dev server is started with them; a Temporal the
// operator brings is checked here at start-up: missing ones are registered through the operator
// API when that is allowed, otherwise start-up stops with the command an operator must run.
import { isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import type { Logger } from '../logger.ts';
import { SEARCH_ATTRIBUTES } from '../embedded/temporal-dev-server.ts';

type AttributeType = (typeof SEARCH_ATTRIBUTES)[keyof typeof SEARCH_ATTRIBUTES];

// temporal.api.enums.v1.IndexedValueType: the wire values of the types we use.
const INDEXED_VALUE_TYPE: Record<AttributeType, number> = { Keyword: 2 };

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAUTHENTICATED = 16;

export interface SearchAttributeCheck {
  /** Names of the gateway's attributes the namespace lacks. */
  missing: string[];
  /** Names the namespace has with another type (cannot be fixed by registering). */
  wrongType: string[];
}

/** Pure comparison of what the namespace has (name → IndexedValueType) with what the gateway needs. */
export function compareSearchAttributes(existing: Record<string, number | string>): SearchAttributeCheck {
  const missing: string[] = [];
  const wrongType: string[] = [];
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
    const have = existing[name];
    if (have === undefined) missing.push(name);
    else if (have !== INDEXED_VALUE_TYPE[type] && have !== `INDEXED_VALUE_TYPE_${type.toUpperCase()}`) wrongType.push(name);
  }
  return { missing, wrongType };
}

/** The operator command that registers `names` (all Keyword today). */
export function registerCommand(namespace: string, names: string[]): string {
  const pairs = names.map((n) => `--name ${n} --type ${SEARCH_ATTRIBUTES[n as keyof typeof SEARCH_ATTRIBUTES]}`);
  return `temporal operator search-attribute create --namespace ${namespace} ${pairs.join(' ')}`;
}

export class MissingSearchAttributesError extends Error {
  readonly missing: string[];
  constructor(namespace: string, missing: string[], reason: string) {
    super(
      `Temporal namespace "${namespace}" lacks the search attributes ${missing.join(', ')} (${reason}); ` +
        `register them, then start again: ${registerCommand(namespace, missing)}`,
    );
    this.name = 'MissingSearchAttributesError';
    this.missing = missing;
  }
}

export class WrongSearchAttributeTypeError extends Error {
  constructor(namespace: string, names: string[]) {
    super(
      `Temporal namespace "${namespace}" has the search attributes ${names.join(', ')} with a type other than Keyword; ` +
        'the gateway needs them as Keyword (a search attribute cannot change type: use another namespace)',
    );
    this.name = 'WrongSearchAttributeTypeError';
  }
}

export interface EnsureOptions {
  connection: ConnectionLike;
  namespace: string;
  /** false: never register, only check (TEMPORAL_REGISTER_SEARCH_ATTRIBUTES=false). */
  register: boolean;
  logger: Logger;
  /** How long to wait for registered attributes to show up (Elasticsearch visibility is asynchronous). */
  timeoutMs?: number;
}

async function listCustom(connection: ConnectionLike, namespace: string): Promise<Record<string, number | string>> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  return (res.customAttributes ?? {}) as Record<string, number | string>;
}

/** Throws MissingSearchAttributesError / WrongSearchAttributeTypeError when the namespace cannot serve calls. */
export async function ensureSearchAttributes(opts: EnsureOptions): Promise<void> {
  const { connection, namespace, logger } = opts;
  let check = compareSearchAttributes(await listCustom(connection, namespace));
  if (check.wrongType.length) throw new WrongSearchAttributeTypeError(namespace, check.wrongType);
  if (!check.missing.length) return;
  if (!opts.register) throw new MissingSearchAttributesError(namespace, check.missing, 'TEMPORAL_REGISTER_SEARCH_ATTRIBUTES=false');

  const searchAttributes = Object.fromEntries(check.missing.map((n) => [n, INDEXED_VALUE_TYPE[SEARCH_ATTRIBUTES[n] ?? 'Keyword']]));
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
    logger.info({ namespace, registered: check.missing }, 'registered the gateway search attributes in Temporal');
  } catch (err) {
    const code = isGrpcServiceError(err) ? err.code : undefined;
    // Another replica registering at the same moment is fine: re-check below.
    if (code !== GRPC_ALREADY_EXISTS) {
      if (code === GRPC_PERMISSION_DENIED || code === GRPC_UNAUTHENTICATED || code === GRPC_UNIMPLEMENTED) {
        throw new MissingSearchAttributesError(namespace, check.missing, `the server refused to register them: ${(err as Error).message}`);
      }
      throw err;
    }
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const registered = check.missing;
  for (;;) {
    check = compareSearchAttributes(await listCustom(connection, namespace));
    if (check.wrongType.length) throw new WrongSearchAttributeTypeError(namespace, check.wrongType);
    // Listed is not yet usable: the frontend validates calls against its namespace cache, which
    // refreshes every few seconds. A visibility query naming them passes once it has them.
    if (!check.missing.length && (await queryAccepts(connection, namespace, registered))) return;
    if (Date.now() > deadline) throw new MissingSearchAttributesError(namespace, check.missing.length ? check.missing : registered, 'registered but not usable yet');
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function queryAccepts(connection: ConnectionLike, namespace: string, names: string[]): Promise<boolean> {
  try {
    await connection.workflowService.countWorkflowExecutions({ namespace, query: names.map((n) => `${n} = ''`).join(' AND ') });
    return true;
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === GRPC_INVALID_ARGUMENT) return false;
    throw err;
  }
}
