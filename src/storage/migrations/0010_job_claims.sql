ALTER TABLE "media_jobs" RENAME COLUMN "lease_owner" TO "claimed_by";--> statement-breakpoint
ALTER TABLE "media_jobs" RENAME COLUMN "lease_until" TO "claim_expires_at";--> statement-breakpoint
UPDATE "media_jobs" SET "phase" = 'sent' WHERE "phase" = 'submitted';--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_kind_check" CHECK ("media_jobs"."kind" IN ('image', 'video', 'audio'));--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_state_check" CHECK ("media_jobs"."state" IN ('queued', 'processing', 'succeeded', 'failed', 'cancelled'));--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_phase_check" CHECK ("media_jobs"."phase" IS NULL OR "media_jobs"."phase" IN ('sent', 'task', 'generated'));
