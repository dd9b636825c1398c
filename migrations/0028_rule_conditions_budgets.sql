-- Rules that say when (issue 44): a permission rule may carry a CEL condition on the request
-- (core/permissions/conditions.ts, compiled and bounded when saved) and a budget per window.
-- An approval raised because a rule's condition or budget did not hold says why (gap_reasons).
ALTER TABLE permission_rules
  ADD COLUMN condition text CHECK (condition IS NULL OR char_length(condition) BETWEEN 1 AND 1000),
  -- {"calls": N, "per": "1h"} or {"sum": "body.amount", "max": M, "per": "1d"}
  ADD COLUMN budget jsonb;

ALTER TABLE approvals ADD COLUMN gap_reasons text[] NOT NULL DEFAULT '{}';

-- What a budgeted rule used per window (fixed windows aligned to the epoch). One row per rule and
-- window, increased by one atomic upsert that refuses to pass the budget (rules/budget-store.ts).
CREATE TABLE rule_budget_windows (
  rule_id uuid NOT NULL REFERENCES permission_rules (id),
  window_start timestamptz NOT NULL,
  used numeric NOT NULL,
  PRIMARY KEY (rule_id, window_start)
);

-- Which call was charged to which rule: a retried check charges a call once.
CREATE TABLE rule_budget_charges (
  rule_id uuid NOT NULL REFERENCES permission_rules (id),
  call_id uuid NOT NULL,
  window_start timestamptz NOT NULL,
  amount numeric NOT NULL,
  charged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rule_id, call_id)
);
