// Proof that a message to a call's workflow came from the gateway (DESIGN.md §10, "decisions are
// verified, not trusted"). Anyone who can reach Temporal — its UI, `temporal workflow update`, any
// SDK client — can send the workflow an update or a signal; only the gateway holds the private half
// of the decision key. The API signs each decision (after checking the person's authority), resume,
// cancel and signal; the workflow verifies the signature with the public key its spec carries,
// inside the update's validator, so an unsigned or altered message is refused before it is accepted
// and changes nothing. Pure and deterministic: the workflow bundle imports this module.
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, bytesToNumberLE, concatBytes, hexToBytes } from '@noble/curves/utils.js';
import { sha512 } from '@noble/hashes/sha2.js';
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
    const point = key.length === 64 && HEX.test(key) ? publicKeyPoint(key) : null;
    return point !== null && verifyWithPoint(signature, bytes, point);
  });
}

type EdPoint = InstanceType<typeof ed25519.Point>;
interface KeyPoint {
  point: EdPoint;
  /** Its canonical encoding, which the signature's hash covers. */
  bytes: Uint8Array;
}

/**
 * Public keys decoded once, each with a window-4 table of its multiples (built in ~3 ms the first
 * time a key is seen): a verify then takes ~0.3 ms instead of ~1.1 (most of it was decoding the key
 * and multiplying it without a table). A handful of keys (the signer's current and retired ones);
 * bounded all the same. Only speed depends on it, never an answer: safe in a shared preloaded module.
 */
const keyPoints = new Map<string, KeyPoint | null>();
const MAX_KEY_POINTS = 16;

function publicKeyPoint(hex: string): KeyPoint | null {
  let entry = keyPoints.get(hex);
  if (entry !== undefined) return entry;
  try {
    // As ed25519.verify decodes it (ZIP 215, its default): any 255-bit y, small order allowed.
    const point = ed25519.Point.fromBytes(hexToBytes(hex), true);
    point.precompute(4, false);
    entry = { point, bytes: point.toBytes() };
  } catch {
    entry = null;
  }
  if (keyPoints.size >= MAX_KEY_POINTS) keyPoints.delete(keyPoints.keys().next().value!);
  keyPoints.set(hex, entry);
  return entry;
}

/**
 * ed25519.verify (@noble/curves 2, RFC 8032 with ZIP 215's rules, cofactored) with the public key
 * already decoded: R from the signature's first half, s < L from its second, k = SHA-512(R ‖ A ‖ M)
 * mod L over the canonical encodings, and [8]([s]B − R − [k]A) = 0. Checked against the library's
 * own verify in test/unit/decisions/proof.test.ts.
 */
function verifyWithPoint(signature: Uint8Array, message: Uint8Array, key: KeyPoint): boolean {
  let R: EdPoint;
  let SB: EdPoint;
  try {
    R = ed25519.Point.fromBytes(signature.subarray(0, 32), true);
    SB = ed25519.Point.BASE.multiplyUnsafe(bytesToNumberLE(signature.subarray(32, 64)));
  } catch {
    return false;
  }
  const k = ed25519.Point.Fn.create(bytesToNumberLE(sha512(concatBytes(R.toBytes(), key.bytes, message))));
  return R.add(key.point.multiplyUnsafe(k)).subtract(SB).clearCofactor().is0();
}

/** Hex of raw bytes (the signer's side encodes keys and signatures the same way). */
export const toHex = (bytes: Uint8Array): string => bytesToHex(bytes);
