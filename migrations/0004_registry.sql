-- Custom service templates (org- or user-owned) and named service instances, which bind a
-- template to credentials: a vault secret name or an OAuth connection.

CREATE TABLE service_templates (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  -- NULL: owned by the org; otherwise owned by that user (and visible to their tree).
  owner_id uuid REFERENCES identities (id),
  key text NOT NULL,
  title text NOT NULL,
  document jsonb NOT NULL,
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX service_templates_org_key ON service_templates (org_id, key) WHERE owner_id IS NULL;
CREATE UNIQUE INDEX service_templates_owner_key ON service_templates (owner_id, key) WHERE owner_id IS NOT NULL;

CREATE TABLE service_instances (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  owner_id uuid REFERENCES identities (id),
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_-]{0,63}$'),
  template_key text NOT NULL,
  secret_name text,
  connection_id uuid REFERENCES connections (id),
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (secret_name IS NULL OR connection_id IS NULL)
);
CREATE UNIQUE INDEX service_instances_org_name ON service_instances (org_id, name) WHERE owner_id IS NULL;
CREATE UNIQUE INDEX service_instances_owner_name ON service_instances (owner_id, name) WHERE owner_id IS NOT NULL;
