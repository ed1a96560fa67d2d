-- Accounts get a role (`operator` opens the operator console and its API) and can be disabled by an operator:
-- a disabled account's keys and sessions are refused on every surface.
ALTER TABLE "accounts" ADD COLUMN "role" text DEFAULT 'user' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_role_check" CHECK ("accounts"."role" IN ('user', 'operator'));--> statement-breakpoint
-- The operator console's "test this row" is audited with the provider row as its subject.
ALTER TABLE "audit_log" DROP CONSTRAINT "audit_log_subject_type_check";--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_subject_type_check" CHECK ("audit_log"."subject_type" IN ('account', 'api-key', 'session', 'media-job', 'config', 'model', 'provider-key', 'provider-row'));--> statement-breakpoint
-- The operator's usage listing across accounts, newest first (its CSV export pages on it).
CREATE INDEX "generations_created_idx" ON "generations" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
