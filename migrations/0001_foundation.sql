-- Foundation: the wiring proof written by a real activity of a real workflow.
CREATE TABLE diagnostic_pings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workflow_id text NOT NULL UNIQUE,
  message text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
