-- Imported vendor documents (issue 41) are saved as drafts: listed for the people who review
-- them, but no agent can search, call or list their actions until an admin publishes the
-- template (POST /v1/templates/{id}/publish). Every template written before is published.
ALTER TABLE service_templates
  ADD COLUMN status text NOT NULL DEFAULT 'published' CHECK (status IN ('draft', 'published'));
