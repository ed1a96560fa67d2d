ALTER TABLE "accounts" ADD COLUMN "requests_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "tokens_per_minute" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "concurrent_requests" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "requests_per_minute" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "tokens_per_minute" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "concurrent_requests" integer;