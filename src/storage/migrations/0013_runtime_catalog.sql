-- Runtime catalog: model entries, switches and prices an operator sets through the admin API, over gateway.yaml's.
CREATE TABLE "runtime_models" (
	"model_id" text PRIMARY KEY NOT NULL,
	"entry" jsonb,
	"pricing" jsonb,
	"active" boolean,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "price_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	"model_id" text NOT NULL,
	"pricing" jsonb NOT NULL,
	"pricing_hash" text NOT NULL,
	"source" text NOT NULL,
	"actor" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_versions_source_check" CHECK ("price_versions"."source" IN ('file', 'runtime'))
);
--> statement-breakpoint
CREATE INDEX "price_versions_model_idx" ON "price_versions" USING btree ("model_id","seq" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "price_version" text;--> statement-breakpoint
ALTER TABLE "audit_log" DROP CONSTRAINT "audit_log_subject_type_check";--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_subject_type_check" CHECK ("audit_log"."subject_type" IN ('account', 'api-key', 'session', 'media-job', 'config', 'model'));--> statement-breakpoint
-- The settlement writes the price version the record was charged at: gw_apply_charge and gw_settle take it last.
DROP FUNCTION gw_settle(text, boolean, text, text, bigint, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer, jsonb);--> statement-breakpoint
DROP FUNCTION gw_apply_charge(text, text, bigint, bigint, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer, jsonb);--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_apply_charge(
  p_account_id text, p_key_id text, p_released bigint, p_claim bigint, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb, p_price_version text,
  OUT charged bigint, OUT short_usage jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_week date := date_trunc('week', p_now AT TIME ZONE 'UTC')::date;
  v_month date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  v_balance bigint;
  v_usage jsonb := p_usage;
  k api_keys%ROWTYPE;
BEGIN
  -- Key before account, the global lock order.
  IF p_key_id IS NOT NULL THEN
    SELECT * INTO k FROM api_keys WHERE id = p_key_id FOR UPDATE;
  END IF;
  SELECT balance_nanos INTO v_balance FROM accounts WHERE id = p_account_id FOR UPDATE;
  -- LEAST ignores the NULL headroom of a key without caps (and of no key).
  charged := GREATEST(0, LEAST(p_claim, COALESCE(v_balance, 0), gw_spend_headroom(k, p_now)));
  IF charged < p_cost THEN
    v_usage := (CASE WHEN jsonb_typeof(p_usage) = 'object' THEN p_usage ELSE '{}'::jsonb END)
      || jsonb_build_object('unchargedUsdCost', trim_scale((p_cost - charged)::numeric / 1000000000));
    IF v_usage ? 'usdCost' THEN
      v_usage := v_usage || jsonb_build_object('usdCost', trim_scale(charged::numeric / 1000000000));
    END IF;
    short_usage := v_usage;
  END IF;
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET
      held_nanos = held_nanos - p_released,
      spent_total_nanos = spent_total_nanos + charged,
      spent_day_nanos = (CASE WHEN day_start >= v_day THEN spent_day_nanos ELSE 0 END) + charged,
      day_start = GREATEST(day_start, v_day),
      spent_week_nanos = (CASE WHEN week_start >= v_week THEN spent_week_nanos ELSE 0 END) + charged,
      week_start = GREATEST(week_start, v_week),
      spent_month_nanos = (CASE WHEN month_start >= v_month THEN spent_month_nanos ELSE 0 END) + charged,
      month_start = GREATEST(month_start, v_month)
    WHERE id = p_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - p_released, balance_nanos = balance_nanos - charged WHERE id = p_account_id;
  INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, route, price_version, created_at)
  VALUES (p_generation_id, p_account_id, p_key_id, p_modality, p_model, p_status, p_request, v_usage, charged, p_duration_ms, p_route, p_price_version, p_now);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_settle(
  p_hold_id text, p_from_lease boolean, p_account_id text, p_key_id text, p_claim bigint, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb, p_price_version text,
  OUT was_held boolean, OUT charged bigint, OUT short_usage jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_held bigint;
  v_claim bigint;
BEGIN
  IF p_claim < 0 OR p_cost < 0 THEN
    RAISE EXCEPTION 'a charge cannot be negative';
  END IF;
  IF p_from_lease THEN
    SELECT amount_nanos INTO v_held FROM holds WHERE id = p_hold_id FOR UPDATE;
    was_held := v_held IS NOT NULL AND v_held >= p_claim;
    IF was_held THEN
      UPDATE holds SET amount_nanos = amount_nanos - p_claim WHERE id = p_hold_id;
      v_held := p_claim;
    ELSE
      v_held := 0;
    END IF;
  ELSE
    DELETE FROM holds WHERE id = p_hold_id RETURNING amount_nanos INTO v_held;
    was_held := v_held IS NOT NULL;
    v_held := COALESCE(v_held, 0);
  END IF;
  v_claim := LEAST(p_claim, v_held);
  IF p_claim > v_held THEN
    v_claim := v_claim + LEAST(p_claim - v_held, gw_free_credit(p_account_id, p_key_id, p_now));
  END IF;
  SELECT a.charged, a.short_usage INTO charged, short_usage FROM gw_apply_charge(p_account_id, p_key_id, v_held, v_claim, p_cost, p_now,
    p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms, p_route, p_price_version) a;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_settle_batch(p_items jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_results jsonb := '[]'::jsonb;
  v_settled record;
BEGIN
  PERFORM 1 FROM holds WHERE id IN (SELECT i->>'hold' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    SELECT * INTO v_settled FROM gw_settle(v_item->>'hold', COALESCE((v_item->>'lease')::boolean, false),
      v_item->>'account', v_item->>'key', (v_item->>'claim')::bigint, (v_item->>'cost')::bigint, (v_item->>'now')::timestamptz,
      v_item->>'generation', v_item->>'modality', v_item->>'model', v_item->>'status', NULLIF(v_item->'request', 'null'::jsonb),
      NULLIF(v_item->'usage', 'null'::jsonb), (v_item->>'durationMs')::integer, NULLIF(v_item->'route', 'null'::jsonb),
      v_item->>'priceVersion');
    v_results := v_results || jsonb_build_array(jsonb_build_array(v_settled.was_held, v_settled.charged::text, v_settled.short_usage));
  END LOOP;
  RETURN v_results;
END $$;
