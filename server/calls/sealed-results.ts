// Upstream answers never enter Temporal in clear. Whoever can read a workflow's history (the
// Temporal UI, `temporal workflow show`) would otherwise read every response body an agent got.
// An activity seals the part of a result that comes from the upstream (body, headers) before it
// returns it to the workflow, keeping in clear only what an operator needs (status, duration);
// the API opens it before answering. The seal is the vault's envelope, bound to the call's id.
// PostgreSQL keeps the open result (GET /v1/calls/{id} reads it there).
import type { Envelope } from '../../core/vault/envelope.ts';
import type { CallOutcome, CallResult } from '../../workflows/definitions.ts';
import { envelopeSchema } from '../vault/envelope-schema.ts';
import type { VaultKeyring } from '../vault/keyring.ts';

/** A result as the workflow carries it: the upstream's part sealed. */
export interface SealedResult {
  status_code: number;
  duration_ms: number;
  sealed: Envelope;
}

type Keyring = Pick<VaultKeyring, 'encryptShortLived' | 'decrypt'>;

const aad = (callId: string) => `call-result:${callId}`;

export const isSealedResult = (r: unknown): r is SealedResult =>
  !!r && typeof r === 'object' && 'sealed' in r && typeof (r as SealedResult).status_code === 'number';

export function sealResult(keyring: Keyring, callId: string, result: CallResult | SealedResult): SealedResult {
  if (isSealedResult(result)) return result;
  const { status_code, duration_ms, ...upstream } = result;
  return { status_code, duration_ms, sealed: keyring.encryptShortLived(JSON.stringify(upstream), aad(callId)) };
}

export function openResult(keyring: Keyring, callId: string, result: CallResult | SealedResult): CallResult {
  if (!isSealedResult(result)) return result;
  const upstream = JSON.parse(keyring.decrypt(envelopeSchema.parse(result.sealed), aad(callId)).toString('utf8')) as object;
  return { status_code: result.status_code, duration_ms: result.duration_ms, ...upstream } as CallResult;
}

/**
 * The outcome as an activity hands it to the workflow. The type stays `CallOutcome`: the workflow
 * reads only the status and time of a result, and every outcome that leaves Temporal for a caller
 * passes through {@link openOutcome} (server/calls/service.ts). Approval records never carry one:
 * a decision's answer is given before its execution runs.
 */
export function sealOutcome<T extends CallOutcome>(keyring: Keyring, callId: string, outcome: T): T {
  if (outcome.status !== 'called') return outcome;
  return { ...outcome, result: sealResult(keyring, callId, outcome.result) as unknown as CallResult };
}

/** An outcome that came out of a workflow (an update's result), opened for its caller. */
export function openOutcome<T extends CallOutcome>(keyring: Keyring, callId: string, outcome: T): T {
  if (outcome.status !== 'called') return outcome;
  return { ...outcome, result: openResult(keyring, callId, outcome.result) };
}
