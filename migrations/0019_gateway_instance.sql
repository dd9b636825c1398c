-- This database's gateway instance id, made once. Gateways pointed at one Temporal namespace claim
-- their task queue with it (server/temporal/queue-owner.ts): a gateway on another database
-- refuses that queue instead of running this one's workflows with the wrong data.
CREATE TABLE gateway_instance (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO gateway_instance DEFAULT VALUES;
