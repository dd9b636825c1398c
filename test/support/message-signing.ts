// A message-signing key of a test's own, signing as the gateway does (server/temporal/message-signer.ts
// keeps its key in PostgreSQL; tests that drive a workflow or the proof alone need none of that).
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { proofMessage, type ProofKind } from '../../core/decisions/proof.ts';

export function testMessageKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const hex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
  return {
    /** The public key, hex, as a spec's `messageKeys` lists it. */
    hex,
    /** `fields` with a proof for the workflow `workflowId`. */
    signed<T extends object>(kind: ProofKind, workflowId: string, fields: T, nonce: string = randomUUID()) {
      const signature = sign(null, proofMessage(kind, workflowId, nonce, fields), privateKey).toString('hex');
      return { ...fields, proof: { nonce, signature } };
    },
  };
}
