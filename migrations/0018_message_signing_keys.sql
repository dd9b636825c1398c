-- The key the gateway signs its messages to call workflows with (decisions, resumes, cancels,
-- signals): a workflow acts only on a message whose Ed25519 signature its spec's public key
-- verifies, so an update sent straight to Temporal (its UI, any SDK client) changes nothing.
-- One row per key; the private half is a vault envelope sealed by the master key (re-wrapped by a
-- master-key rotation like every envelope), the public half in clear (it goes into each call's spec).
CREATE TABLE message_signing_keys (
  id text PRIMARY KEY,
  public_key text NOT NULL,
  envelope jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
