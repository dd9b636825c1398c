// Message proofs: what the gateway signs, the workflow verifies; anything else is refused.
import { describe, expect, it } from 'vitest';
import { verifyProof } from '../../../core/decisions/proof.ts';
import { testMessageKey } from '../../support/message-signing.ts';
import { canonicalJson } from '../../../core/text/canonical-json.ts';

const keyPair = testMessageKey;

describe('message proofs', () => {
  const gateway = keyPair();
  const decision = { decision: 'allow', resolverId: 'u-1', resolverIsAdmin: false, reason: 'ok' };

  it('accepts a message the gateway signed, after a JSON round trip (as Temporal carries it)', () => {
    const message = JSON.parse(JSON.stringify(gateway.signed('resolve', 'call-1', { ...decision, reason: undefined }, 'n-1')));
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', message)).toBe(true);
  });

  it('refuses a missing proof, another key, another workflow, another kind and any changed field', () => {
    const message = gateway.signed('resolve', 'call-1', decision, 'n-1');
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', decision)).toBe(false);
    expect(verifyProof([keyPair().hex], 'resolve', 'call-1', message)).toBe(false);
    expect(verifyProof([gateway.hex], 'resolve', 'call-2', message)).toBe(false);
    expect(verifyProof([gateway.hex], 'cancel', 'call-1', message)).toBe(false);
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', { ...message, resolverId: 'u-2' })).toBe(false);
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', { ...message, resolverIsAdmin: true })).toBe(false);
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', { ...message, extra: 1 })).toBe(false);
    expect(verifyProof([gateway.hex], 'resolve', 'call-1', { ...message, proof: { ...message.proof, nonce: 'n-2' } })).toBe(false);
  });

  it('refuses malformed proofs and keys without throwing', () => {
    const message = gateway.signed('resolve', 'call-1', decision, 'n-1');
    const bad = [
      { ...message, proof: { nonce: 'n-1', signature: 'zz'.repeat(64) } },
      { ...message, proof: { nonce: 'n-1', signature: message.proof.signature.slice(2) } },
      { ...message, proof: { nonce: '', signature: message.proof.signature } },
      { ...message, proof: { nonce: 'x'.repeat(65), signature: message.proof.signature } },
      { ...message, proof: { nonce: 5, signature: message.proof.signature } },
      { ...message, proof: null },
    ];
    for (const m of bad) expect(verifyProof([gateway.hex], 'resolve', 'call-1', m as never)).toBe(false);
    expect(verifyProof([], 'resolve', 'call-1', message)).toBe(false);
    expect(verifyProof(undefined, 'resolve', 'call-1', message)).toBe(false);
    expect(verifyProof(['00'.repeat(32)], 'resolve', 'call-1', message)).toBe(false);
    expect(verifyProof(['not hex'], 'resolve', 'call-1', message)).toBe(false);
  });

  it('accepts a proof by any of the keys the spec lists', () => {
    const message = gateway.signed('supersede', 'call-9', { byApprovalId: 'a-1' });
    expect(verifyProof([keyPair().hex, gateway.hex], 'supersede', 'call-9', message)).toBe(true);
  });

  it('canonical JSON sorts keys at every depth and leaves undefined members out', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"z":1}]},"b":1}');
    expect(canonicalJson({ s: 'é\u2028"' })).toBe(JSON.stringify({ s: 'é\u2028"' }));
  });
});
