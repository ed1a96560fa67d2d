ALTER TABLE "media_jobs" ADD COLUMN "upstream_error_status" integer;--> statement-breakpoint
ALTER TABLE "media_jobs" ADD COLUMN "upstream_error_body" "bytea";--> statement-breakpoint
ALTER TABLE "media_jobs" ADD COLUMN "upstream_error_content_type" text;