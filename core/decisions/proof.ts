// Proof that a message to a call's workflow came from the gateway (DESIGN.md §10, "decisions are
// verified, not trusted"). Anyone who can reach Temporal — its UI, `temporal workflow update`, any
// SDK client — can send the workflow an update or a signal; only the gateway holds the private half
// of the decision key. The API signs each decision (after checking the person's authority), resume,
// cancel and signal; the workflow verifies the signature with the public key its spec carries,
// inside the update's validator, so an unsigned or altered message is refused before it is accepted
// and changes nothing. Pure and deterministic: the workflow bundle imports this module.
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import { canonicalJson } from '../text/canonical-json.ts';

/** What a message is: the signature covers it, so a resume's proof cannot pass as a decision's. */
export type ProofKind = 'resolve' | 'replay' | 'cancel' | 'supersede' | 'shared-outcome';

/**
 * Carried beside a message's fields. `nonce` makes each signed message single-use in its workflow;
 * `signature` is Ed25519 over {@link proofMessage}, hex.
 */
export interface MessageProof {
  nonce: string;
  signature: string;
}

/** A message with its proof (the proof is not part of what is signed). */
export type Proven<T> = T & { proof?: MessageProof };

/** The bytes signed: the kind, the workflow it is for, the nonce and the message's own fields. */
export function proofMessage(kind: ProofKind, workflowId: string, nonce: string, fields: unknown): Uint8Array {
  return new TextEncoder().encode(`gateway-message-v1\n${kind}\n${workflowId}\n${nonce}\n${canonicalJson(fields)}`);
}

/** The message's fields without its proof. */
export function withoutProof<T extends object>(message: Proven<T>): T {
  const { proof: _proof, ...fields } = message;
  return fields as T;
}

const HEX = /^[0-9a-f]+$/;

// The base point's table, window 8, built on first use: measured beside window 2 in one run, a
// signature (the API signs every decision, and loads this module too) took 0.39–0.44 ms instead
// of 0.96–1.36, a verify 1.60–1.63 instead of 1.74–1.96. Built once per process: every bundle of
// the workflow code preloads this module (server/temporal/bundle-options.ts, checked by
// test/unit/server/workflow-bundle.test.ts), so the worker evaluates it once and shares it
// between workflows instead of building it per workflow.
ed25519.Point.BASE.precompute(8);

/**
 * Whether `message` carries a valid proof for `workflowId` by one of `publicKeys` (hex). False for
 * anything malformed: a missing proof, a signature of the wrong length, a key that is not a point.
 */
export function verifyProof<T extends object>(publicKeys: readonly string[] | undefined, kind: ProofKind, workflowId: string, message: Proven<T>): boolean {
  const proof = message.proof;
  if (!publicKeys?.length || !proof || typeof proof.nonce !== 'string' || typeof proof.signature !== 'string') return false;
  if (proof.signature.length !== 128 || !HEX.test(proof.signature) || proof.nonce.length === 0 || proof.nonce.length > 64) return false;
  const bytes = proofMessage(kind, workflowId, proof.nonce, withoutProof(message));
  const signature = hexToBytes(proof.signature);
  return publicKeys.some((key) => {
    if (key.length !== 64 || !HEX.test(key)) return false;
    try {
      return ed25519.verify(signature, bytes, hexToBytes(key));
    } catch {
      return false;
    }
  });
}

/** Hex of raw bytes (the signer's side encodes keys and signatures the same way). */
export const toHex = (bytes: Uint8Array): string => bytesToHex(bytes);
