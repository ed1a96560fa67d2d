-- Webhook deliveries are claimed in turns (WebhooksRepository.claim): each endpoint's pending deliveries are
-- read in the order they fall due from an index of their own, and its deliveries in flight counted from another,
-- so that the claim can give the next free sending slot to the account, and within it the endpoint, with the
-- fewest under way. The global index by run_after, which served a single first-in-first-out queue, goes.
DROP INDEX "webhook_deliveries_due_idx";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("endpoint_id","run_after","created_at") WHERE "webhook_deliveries"."state" in ('queued', 'delivering');--> statement-breakpoint
CREATE INDEX "webhook_deliveries_in_flight_idx" ON "webhook_deliveries" USING btree ("endpoint_id","claim_expires_at") WHERE "webhook_deliveries"."state" = 'delivering';