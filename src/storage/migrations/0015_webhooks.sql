-- Per-account webhook endpoints, their durable deliveries (claimed across processes as media jobs are) and the
-- log of each attempt. Events are queued by triggers, in the transaction of their cause, so no event is lost
-- between a change and its announcement, whichever code path (account API, admin API, CLI, settlement) made it.
-- api_key_cap_alerts: marks of the cap levels announced, one per key, cap, level and window, so each is announced
-- once. accounts.balance_alert_nanos: the account's low-balance threshold (null: no alert), compared by the
-- settlement's own UPDATE. api_keys.cap_alerts: whether an active endpoint of the key's account takes
-- api_key.cap_reached; only such keys pay for the check.
CREATE TABLE "api_key_cap_alerts" (
	"api_key_id" text NOT NULL,
	"cap" text NOT NULL,
	"level" integer NOT NULL,
	"window_start" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_key_cap_alerts_pk" PRIMARY KEY("api_key_id","cap","level","window_start")
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"status_code" integer,
	"latency_ms" integer NOT NULL,
	"error" text,
	"response_excerpt" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"account_id" text NOT NULL,
	"event_type" text NOT NULL,
	"data" jsonb NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"run_after" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_by" text,
	"claim_expires_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_state_check" CHECK ("webhook_deliveries"."state" IN ('queued', 'delivering', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"event_types" text[] NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"sealed_secret" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "balance_alert_nanos" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "cap_alerts" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "api_key_cap_alerts" ADD CONSTRAINT "api_key_cap_alerts_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("run_after") WHERE "webhook_deliveries"."state" in ('queued', 'delivering');--> statement-breakpoint
CREATE INDEX "webhook_deliveries_finished_idx" ON "webhook_deliveries" USING btree ("finished_at") WHERE "webhook_deliveries"."finished_at" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_endpoints_account_idx" ON "webhook_endpoints" USING btree ("account_id","created_at");--> statement-breakpoint
-- Queues one delivery of the event to each active endpoint of the account subscribed to its type.
CREATE FUNCTION webhook_enqueue(p_account_id text, p_type text, p_data jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, data)
  SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, e.account_id, p_type, p_data
    FROM webhook_endpoints e
   WHERE e.account_id = p_account_id AND e.is_active AND p_type = ANY (e.event_types);
$$;--> statement-breakpoint
CREATE FUNCTION webhook_nanos_usd(p_nanos bigint) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
  SELECT trim_scale(p_nanos::numeric / 1000000000);
$$;--> statement-breakpoint
CREATE FUNCTION webhook_balance_low() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_enqueue(NEW.id, 'balance.low', jsonb_build_object(
    'accountId', NEW.id,
    'balance', webhook_nanos_usd(NEW.balance_nanos),
    'threshold', webhook_nanos_usd(NEW.balance_alert_nanos)));
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- Fires only on a crossing from at/above the threshold to below it; accounts without a threshold pay one null test.
CREATE TRIGGER "accounts_balance_low" AFTER UPDATE OF "balance_nanos" ON "accounts" FOR EACH ROW
  WHEN (NEW.balance_alert_nanos IS NOT NULL AND OLD.balance_nanos >= NEW.balance_alert_nanos
        AND NEW.balance_nanos < NEW.balance_alert_nanos)
  EXECUTE FUNCTION webhook_balance_low();--> statement-breakpoint
CREATE FUNCTION webhook_cap_reached() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_level integer;
BEGIN
  FOR c IN SELECT * FROM (VALUES
      ('daily', NEW.daily_limit_nanos, NEW.spent_day_nanos, NEW.day_start::text),
      ('weekly', NEW.weekly_limit_nanos, NEW.spent_week_nanos, NEW.week_start::text),
      ('monthly', NEW.monthly_limit_nanos, NEW.spent_month_nanos, NEW.month_start::text),
      ('total', NEW.total_limit_nanos, NEW.spent_total_nanos, 'total')) AS v(cap, limit_nanos, spent, window_start)
  LOOP
    CONTINUE WHEN c.limit_nanos IS NULL OR c.limit_nanos <= 0;
    FOREACH v_level IN ARRAY ARRAY[80, 100] LOOP
      CONTINUE WHEN c.spent::numeric * 100 < c.limit_nanos::numeric * v_level;
      INSERT INTO api_key_cap_alerts (api_key_id, cap, level, window_start)
      VALUES (NEW.id, c.cap, v_level, COALESCE(c.window_start, 'none')) ON CONFLICT DO NOTHING;
      IF FOUND THEN
        PERFORM webhook_enqueue(NEW.account_id, 'api_key.cap_reached', jsonb_build_object(
          'apiKeyId', NEW.id, 'name', NEW.name, 'cap', c.cap, 'level', v_level,
          'limit', webhook_nanos_usd(c.limit_nanos), 'spent', webhook_nanos_usd(c.spent),
          'windowStart', c.window_start));
      END IF;
    END LOOP;
  END LOOP;
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- Only keys of accounts with a subscribed endpoint (cap_alerts) run the check, and only when they spent more.
CREATE TRIGGER "api_keys_cap_reached" AFTER UPDATE OF "spent_total_nanos" ON "api_keys" FOR EACH ROW
  WHEN (NEW.cap_alerts AND NEW.spent_total_nanos > OLD.spent_total_nanos)
  EXECUTE FUNCTION webhook_cap_reached();--> statement-breakpoint
CREATE FUNCTION webhook_key_disabled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_enqueue(NEW.account_id, 'api_key.disabled', jsonb_build_object(
    'apiKeyId', NEW.id, 'name', NEW.name,
    'reason', CASE WHEN NEW.revoked_at IS NOT NULL THEN 'revoked' ELSE 'disabled' END));
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "api_keys_disabled" AFTER UPDATE OF "is_active" ON "api_keys" FOR EACH ROW
  WHEN (OLD.is_active AND NOT NEW.is_active)
  EXECUTE FUNCTION webhook_key_disabled();--> statement-breakpoint
-- A new key of an account whose endpoints take cap events is checked from its first settlement.
CREATE FUNCTION webhook_key_cap_alerts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.cap_alerts := EXISTS (SELECT 1 FROM webhook_endpoints e
                             WHERE e.account_id = NEW.account_id AND e.is_active
                               AND 'api_key.cap_reached' = ANY (e.event_types));
  RETURN NEW;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "api_keys_cap_alerts" BEFORE INSERT ON "api_keys" FOR EACH ROW EXECUTE FUNCTION webhook_key_cap_alerts();--> statement-breakpoint
-- Endpoints changed: the account's keys learn whether cap events are wanted.
CREATE FUNCTION webhook_endpoints_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_account text := COALESCE(NEW.account_id, OLD.account_id);
  v_wanted boolean;
BEGIN
  v_wanted := EXISTS (SELECT 1 FROM webhook_endpoints e
                       WHERE e.account_id = v_account AND e.is_active
                         AND 'api_key.cap_reached' = ANY (e.event_types));
  -- Locked in id order, as a settlement batch locks keys, so the two cannot deadlock.
  UPDATE api_keys SET cap_alerts = v_wanted
   WHERE id IN (SELECT id FROM api_keys WHERE account_id = v_account AND cap_alerts IS DISTINCT FROM v_wanted
                 ORDER BY id FOR UPDATE);
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "webhook_endpoints_changed" AFTER INSERT OR UPDATE OR DELETE ON "webhook_endpoints" FOR EACH ROW
  EXECUTE FUNCTION webhook_endpoints_changed();--> statement-breakpoint
CREATE FUNCTION webhook_media_job_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_enqueue(NEW.account_id,
    CASE WHEN NEW.state = 'succeeded' THEN 'media_job.completed' ELSE 'media_job.failed' END,
    jsonb_strip_nulls(jsonb_build_object(
      'jobId', NEW.id, 'kind', NEW.kind, 'model', NEW.model, 'state', NEW.state, 'error', NEW.error,
      'createdAt', NEW.created_at, 'finishedAt', NEW.finished_at)));
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- A job reaching its end (settled in the same transaction) announces it; a cancelled job announces nothing.
CREATE TRIGGER "media_jobs_finished" AFTER UPDATE OF "state" ON "media_jobs" FOR EACH ROW
  WHEN (NEW.state IN ('succeeded', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION webhook_media_job_finished();
