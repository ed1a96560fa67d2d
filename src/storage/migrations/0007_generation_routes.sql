ALTER TABLE "generations" ADD COLUMN "route" jsonb;--> statement-breakpoint
ALTER TABLE "media_jobs" ADD COLUMN "request_id" text;
--> statement-breakpoint

-- The settlement functions take the generation's route (provider row, fallbacks tried, request id, first
-- byte) and write it with the record, in the same INSERT. Same semantics as migrations 0004 and 0006 otherwise.
DROP FUNCTION gw_apply_charge(text, text, bigint, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer);
--> statement-breakpoint
DROP FUNCTION gw_settle(text, text, text, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer);
--> statement-breakpoint
DROP FUNCTION gw_lease_settle(text, text, text, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer);
--> statement-breakpoint
DROP FUNCTION gw_settle_delivered(text, text, text, bigint, timestamptz, text, text, text, text, jsonb, jsonb, integer);
--> statement-breakpoint

CREATE FUNCTION gw_apply_charge(
  p_account_id text, p_key_id text, p_released bigint, p_charge bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_week date := date_trunc('week', p_now AT TIME ZONE 'UTC')::date;
  v_month date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  v_charge bigint;
BEGIN
  -- Key before account, the global lock order.
  PERFORM 1 FROM api_keys WHERE id = p_key_id FOR UPDATE;
  SELECT GREATEST(0, LEAST(p_charge, balance_nanos)) INTO v_charge FROM accounts WHERE id = p_account_id FOR UPDATE;
  v_charge := COALESCE(v_charge, 0);
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET
      held_nanos = held_nanos - p_released,
      spent_total_nanos = spent_total_nanos + v_charge,
      spent_day_nanos = (CASE WHEN day_start >= v_day THEN spent_day_nanos ELSE 0 END) + v_charge,
      day_start = GREATEST(day_start, v_day),
      spent_week_nanos = (CASE WHEN week_start >= v_week THEN spent_week_nanos ELSE 0 END) + v_charge,
      week_start = GREATEST(week_start, v_week),
      spent_month_nanos = (CASE WHEN month_start >= v_month THEN spent_month_nanos ELSE 0 END) + v_charge,
      month_start = GREATEST(month_start, v_month)
    WHERE id = p_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - p_released, balance_nanos = balance_nanos - v_charge WHERE id = p_account_id;
  INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, route, created_at)
  VALUES (p_generation_id, p_account_id, p_key_id, p_modality, p_model, p_status, p_request, p_usage, v_charge, p_duration_ms, p_route, p_now);
END $$;
--> statement-breakpoint

CREATE FUNCTION gw_settle(
  p_hold_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_held bigint;
  v_found boolean;
  v_charge bigint;
BEGIN
  IF p_cost < 0 THEN
    RAISE EXCEPTION 'cost must not be negative';
  END IF;
  DELETE FROM holds WHERE id = p_hold_id RETURNING amount_nanos INTO v_held;
  v_found := FOUND;
  IF v_found THEN
    v_charge := LEAST(p_cost, v_held);
  ELSE
    v_held := 0;
    v_charge := LEAST(p_cost, gw_free_credit(p_account_id, p_key_id, p_now));
  END IF;
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_held, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms, p_route);
  RETURN v_found;
END $$;
--> statement-breakpoint

CREATE FUNCTION gw_lease_settle(
  p_lease_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_leased bigint;
  v_charge bigint;
  v_released bigint := 0;
BEGIN
  IF p_cost < 0 THEN
    RAISE EXCEPTION 'cost must not be negative';
  END IF;
  SELECT amount_nanos INTO v_leased FROM holds WHERE id = p_lease_id FOR UPDATE;
  IF v_leased IS NOT NULL AND v_leased >= p_cost THEN
    UPDATE holds SET amount_nanos = amount_nanos - p_cost WHERE id = p_lease_id;
    v_released := p_cost;
    v_charge := p_cost;
  ELSE
    v_charge := LEAST(p_cost, gw_free_credit(p_account_id, p_key_id, p_now));
  END IF;
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_released, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms, p_route);
  RETURN v_released = p_cost;
END $$;
--> statement-breakpoint

CREATE FUNCTION gw_settle_delivered(
  p_hold_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_held bigint;
  v_found boolean;
  v_charge bigint;
BEGIN
  IF p_cost < 0 THEN
    RAISE EXCEPTION 'cost must not be negative';
  END IF;
  DELETE FROM holds WHERE id = p_hold_id RETURNING amount_nanos INTO v_held;
  v_found := FOUND;
  v_held := COALESCE(v_held, 0);
  IF p_cost <= v_held THEN
    v_charge := p_cost;
  ELSE
    v_charge := v_held + LEAST(p_cost - v_held, gw_free_credit(p_account_id, p_key_id, p_now));
  END IF;
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_held, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms, p_route);
  RETURN v_found;
END $$;
--> statement-breakpoint

CREATE OR REPLACE FUNCTION gw_settle_batch(p_items jsonb)
RETURNS boolean[] LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_found boolean[] := '{}';
  v_args record;
BEGIN
  PERFORM 1 FROM holds WHERE id IN (SELECT i->>'hold' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    SELECT v_item->>'hold' AS hold, v_item->>'account' AS account, v_item->>'key' AS key, (v_item->>'cost')::bigint AS cost,
           (v_item->>'now')::timestamptz AS now, v_item->>'generation' AS generation, v_item->>'modality' AS modality,
           v_item->>'model' AS model, v_item->>'status' AS status, NULLIF(v_item->'request', 'null'::jsonb) AS request,
           NULLIF(v_item->'usage', 'null'::jsonb) AS usage, (v_item->>'durationMs')::integer AS duration_ms,
           NULLIF(v_item->'route', 'null'::jsonb) AS route
      INTO v_args;
    IF COALESCE((v_item->>'lease')::boolean, false) THEN
      v_found := v_found || gw_lease_settle(v_args.hold, v_args.account, v_args.key, v_args.cost, v_args.now, v_args.generation,
        v_args.modality, v_args.model, v_args.status, v_args.request, v_args.usage, v_args.duration_ms, v_args.route);
    ELSE
      v_found := v_found || gw_settle(v_args.hold, v_args.account, v_args.key, v_args.cost, v_args.now, v_args.generation,
        v_args.modality, v_args.model, v_args.status, v_args.request, v_args.usage, v_args.duration_ms, v_args.route);
    END IF;
  END LOOP;
  RETURN v_found;
END $$;
