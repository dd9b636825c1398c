-- Connected upstream MCP servers (issue 43) and their tools. Each server's tools are published
-- as a generated service template (template_id): the registry, search and the call path read
-- that; these tables keep what it is generated from — the server, each tool as published (its
-- pin) and as last listed, and an admin's per-tool overrides.

CREATE TABLE mcp_servers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id),
  -- NULL: the org's (admins); otherwise that user's own.
  owner_id uuid REFERENCES identities (id),
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_-]{0,63}$'),
  url text NOT NULL,
  -- {"type":"none"} | {"type":"bearer","secret_name"} | {"type":"header","header_name","secret_name"}
  auth jsonb NOT NULL,
  template_id uuid NOT NULL REFERENCES service_templates (id) ON DELETE CASCADE,
  refreshed_at timestamptz NOT NULL DEFAULT now(),
  created_by uuid REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mcp_servers_template ON mcp_servers (template_id);

CREATE TABLE mcp_server_tools (
  server_id uuid NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
  name text NOT NULL,
  action_key text NOT NULL,
  summary text NOT NULL,
  -- {description, input_schema, annotations} as published, and as the server listed it last.
  pinned jsonb NOT NULL,
  current jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'new', 'removed')),
  -- {risk?, scope_param?, enabled?}: an admin's choices, winning over the annotations.
  override jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (server_id, name)
);
