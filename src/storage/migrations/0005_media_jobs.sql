CREATE TABLE "media_assets" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"job_id" text NOT NULL,
	"object_key" text NOT NULL,
	"media_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "media_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"api_key_id" text,
	"kind" text NOT NULL,
	"model" text NOT NULL,
	"provider_id" text NOT NULL,
	"upstream_model" text NOT NULL,
	"request" jsonb NOT NULL,
	"recorded_request" jsonb NOT NULL,
	"state" text NOT NULL,
	"phase" text,
	"upstream_task_id" text,
	"upstream_result" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"price_snapshot" jsonb NOT NULL,
	"hold_id" text NOT NULL,
	"hold_nanos" bigint NOT NULL,
	"result" jsonb,
	"error" text,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"run_after" timestamp with time zone DEFAULT now() NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "media_assets" ADD CONSTRAINT "media_assets_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_jobs" ADD CONSTRAINT "media_jobs_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_assets_expiry_idx" ON "media_assets" USING btree ("expires_at") WHERE "media_assets"."expires_at" is not null;--> statement-breakpoint
CREATE INDEX "media_assets_job_idx" ON "media_assets" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "media_jobs_due_idx" ON "media_jobs" USING btree ("run_after") WHERE "media_jobs"."state" in ('queued', 'processing');--> statement-breakpoint
CREATE INDEX "media_jobs_account_idx" ON "media_jobs" USING btree ("account_id","created_at");--> statement-breakpoint

-- A media job's hold belongs to the job row, not to the process running it: it outlives that process (the
-- job is taken over and settles it), so the sweep of dead processes' holds leaves it alone.
CREATE OR REPLACE FUNCTION gw_release_orphaned_holds(p_instance_id text, p_stale_before timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_ids text[];
BEGIN
  SELECT array_agg(locked.id) INTO v_ids FROM (
    SELECT h.id FROM holds h
     WHERE h.instance_id <> p_instance_id
       AND h.instance_id <> 'media-job'
       AND NOT EXISTS (SELECT 1 FROM gateway_instances i WHERE i.id = h.instance_id AND i.heartbeat_at >= p_stale_before)
     ORDER BY h.id
     FOR UPDATE SKIP LOCKED
  ) locked;
  IF v_ids IS NOT NULL THEN
    PERFORM 1 FROM api_keys WHERE id IN (SELECT api_key_id FROM holds WHERE id = ANY(v_ids)) ORDER BY id FOR UPDATE;
    PERFORM 1 FROM accounts WHERE id IN (SELECT account_id FROM holds WHERE id = ANY(v_ids)) ORDER BY id FOR UPDATE;
    UPDATE api_keys k SET held_nanos = k.held_nanos - r.amount
      FROM (SELECT api_key_id, sum(amount_nanos)::bigint AS amount FROM holds WHERE id = ANY(v_ids) AND api_key_id IS NOT NULL GROUP BY api_key_id) r
     WHERE k.id = r.api_key_id;
    UPDATE accounts a SET held_nanos = a.held_nanos - r.amount
      FROM (SELECT account_id, sum(amount_nanos)::bigint AS amount FROM holds WHERE id = ANY(v_ids) GROUP BY account_id) r
     WHERE a.id = r.account_id;
    DELETE FROM holds WHERE id = ANY(v_ids);
  END IF;
  DELETE FROM gateway_instances WHERE id <> p_instance_id AND heartbeat_at < p_stale_before;
  RETURN COALESCE(cardinality(v_ids), 0);
END $$;
