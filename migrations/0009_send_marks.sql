-- Crash-safe execution (issue 11): a durable "about to send" mark, written in PostgreSQL before an
-- upstream request leaves. After a crash, the mark tells a retry whether the request may have
-- left: without a mark it is sent (once); with one, only an idempotent request is sent again.
ALTER TABLE calls ADD COLUMN send_marked_at timestamptz;
ALTER TABLE executions ADD COLUMN send_marked_at timestamptz;
ALTER TABLE executions ADD COLUMN send_attempts integer NOT NULL DEFAULT 0;
