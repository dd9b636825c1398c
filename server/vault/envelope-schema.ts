// The stored shape of a vault envelope (core/vault/envelope.ts), shared by every store that keeps
// one in a JSON column: secret versions, connection tokens, webhook secrets, stored call requests,
// the authorization server's keys.
import { z } from 'zod';

/** The stored envelope (core/vault/envelope.ts): ciphertext, IVs, tags and the wrapped data key. */
export const envelopeSchema = z.object({
  ciphertext: z.string(),
  iv: z.string(),
  tag: z.string(),
  wrappedDataKey: z.string(),
  wrapIv: z.string(),
  wrapTag: z.string(),
  kekId: z.string(),
});
