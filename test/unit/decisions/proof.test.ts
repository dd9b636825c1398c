// Message proofs: what the gateway signs, the workflow verifies; anything else is refused.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, bytesToNumberLE, hexToBytes, numberToBytesLE } from '@noble/curves/utils.js';
import { proofMessage, verifyProof, type ProofKind } from '../../../core/decisions/proof.ts';
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

  // verifyProof verifies with public keys decoded once (a cached point and table), not through
  // ed25519.verify: both must answer alike for every signature and key, valid or not.
  describe('answers as @noble/curves ed25519.verify does', () => {
    const L = ed25519.Point.Fn.ORDER;
    const fields = { decision: 'allow', n: 0 };
    /** Our answer and the library's for a raw signature and key (hex) over one proof message. */
    const both = (signature: Uint8Array, keyHex: string, nonce = 'n-1') => {
      const message = { ...fields, proof: { nonce, signature: bytesToHex(signature) } };
      const ours = verifyProof([keyHex], 'resolve' satisfies ProofKind, 'call-1', message);
      let theirs: boolean;
      try {
        theirs = ed25519.verify(signature, proofMessage('resolve', 'call-1', nonce, fields), hexToBytes(keyHex));
      } catch {
        theirs = false;
      }
      return { ours, theirs };
    };
    const signedBy = (secret: Uint8Array, nonce: string) => ed25519.sign(proofMessage('resolve', 'call-1', nonce, fields), secret);

    it('valid signatures of many keys, and each with one bit flipped anywhere', () => {
      for (let i = 0; i < 60; i++) {
        const secret = ed25519.utils.randomSecretKey();
        const keyHex = bytesToHex(ed25519.getPublicKey(secret));
        const signature = signedBy(secret, `n-${i}`);
        expect(both(signature, keyHex, `n-${i}`)).toEqual({ ours: true, theirs: true });
        const flipped = signature.slice();
        const bit = randomBytes(2).readUInt16BE() % 512;
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        const answer = both(flipped, keyHex, `n-${i}`);
        expect(answer.ours).toBe(answer.theirs);
      }
    });

    it('s + L (a non-canonical s), random bytes, another key', () => {
      const secret = ed25519.utils.randomSecretKey();
      const keyHex = bytesToHex(ed25519.getPublicKey(secret));
      const signature = signedBy(secret, 'n-1');
      const s = bytesToNumberLE(signature.subarray(32));
      const bigS = new Uint8Array([...signature.subarray(0, 32), ...numberToBytesLE(s + L, 32)]);
      expect(both(bigS, keyHex)).toEqual({ ours: false, theirs: false });
      for (let i = 0; i < 20; i++) expect(both(randomBytes(64), keyHex)).toEqual({ ours: false, theirs: false });
      expect(both(signature, bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())))).toEqual({ ours: false, theirs: false });
    });

    it('small-order and non-canonical encodings of keys and R, as ZIP 215 reads them', () => {
      const identity = '01' + '00'.repeat(31);
      // y = p + 1 (≥ p: accepted by ZIP 215, the same point as y = 1, the identity).
      const nonCanonicalIdentity = bytesToHex(numberToBytesLE(ed25519.Point.Fp.ORDER + 1n, 32));
      const orderTwo = 'ec' + 'ff'.repeat(30) + '7f';
      const notAPoint = '02' + '00'.repeat(31);
      const zeroS = new Uint8Array(32);
      for (const key of [identity, nonCanonicalIdentity, orderTwo, notAPoint]) {
        for (const r of [identity, nonCanonicalIdentity, orderTwo, notAPoint]) {
          const signature = new Uint8Array([...hexToBytes(r), ...zeroS]);
          const answer = both(signature, key);
          expect(answer.ours, `key ${key.slice(0, 4)}… R ${r.slice(0, 4)}…`).toBe(answer.theirs);
        }
      }
      // The identity key with R = identity and s = 0 verifies for any message under ZIP 215 (the
      // library's rule, kept): such a key never comes from the gateway's own signer.
      expect(both(new Uint8Array([...hexToBytes(identity), ...zeroS]), identity)).toEqual({ ours: true, theirs: true });
    });

    it('a key seen again verifies from its cached point, and still refuses what it should', () => {
      const secret = ed25519.utils.randomSecretKey();
      const keyHex = bytesToHex(ed25519.getPublicKey(secret));
      for (let i = 0; i < 3; i++) expect(both(signedBy(secret, `again-${i}`), keyHex, `again-${i}`)).toEqual({ ours: true, theirs: true });
      expect(both(signedBy(secret, 'again-0'), keyHex, 'again-1')).toEqual({ ours: false, theirs: false });
    });
  });
});
