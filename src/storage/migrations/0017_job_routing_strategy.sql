-- A media job keeps the routing strategy its model named when it was queued (null: none named), so that its usage
-- record's route names it as a request's does.
ALTER TABLE "media_jobs" ADD COLUMN "routing_strategy" text;--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_routing_strategy_check" CHECK ("media_jobs"."routing_strategy" IS NULL OR "media_jobs"."routing_strategy" IN ('priority', 'weighted', 'latency', 'price'));