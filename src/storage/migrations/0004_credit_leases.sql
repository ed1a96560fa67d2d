-- Credit leases: a process reserves a block of an account's available balance and of its key's cap
-- headroom in one statement, admits requests against that block in memory, and settles them out of it.
-- A lease is a row of `holds` owned by the process (its `instance_id`), so a process that dies leaves its
-- leases to the same orphan sweep as any hold. Locks keep the global order of every ledger function:
-- hold, then api key, then account.

-- Headroom left under each cap of key k at p_now (its limit less the spend of the current window and what
-- it holds), in the order daily, weekly, monthly, total; NULL where the key has no such cap.
CREATE FUNCTION gw_cap_headrooms(k api_keys, p_now timestamptz)
RETURNS bigint[] LANGUAGE sql STABLE AS $$
  SELECT ARRAY[
    k.daily_limit_nanos - (CASE WHEN k.day_start >= (p_now AT TIME ZONE 'UTC')::date THEN k.spent_day_nanos ELSE 0 END) - k.held_nanos,
    k.weekly_limit_nanos - (CASE WHEN k.week_start >= date_trunc('week', p_now AT TIME ZONE 'UTC')::date THEN k.spent_week_nanos ELSE 0 END) - k.held_nanos,
    k.monthly_limit_nanos - (CASE WHEN k.month_start >= date_trunc('month', p_now AT TIME ZONE 'UTC')::date THEN k.spent_month_nanos ELSE 0 END) - k.held_nanos,
    k.total_limit_nanos - k.spent_total_nanos - k.held_nanos]
$$;
--> statement-breakpoint

-- What a charge may take when the credit it was held against is gone (released as orphaned while the
-- request ran): what the account and the key still have free at p_now. Locks the key, then the account.
CREATE FUNCTION gw_free_credit(p_account_id text, p_key_id text, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_free bigint;
  k api_keys%ROWTYPE;
BEGIN
  IF p_key_id IS NOT NULL THEN
    SELECT * INTO k FROM api_keys WHERE id = p_key_id FOR UPDATE;
  END IF;
  SELECT balance_nanos - held_nanos INTO v_free FROM accounts WHERE id = p_account_id FOR UPDATE;
  -- LEAST ignores the NULLs of caps the key does not have (and of a missing key).
  RETURN GREATEST(0, LEAST(COALESCE(v_free, 0), (SELECT min(h) FROM unnest(gw_cap_headrooms(k, p_now)) h)));
END $$;
--> statement-breakpoint

-- Moves p_released out of the held sums and p_charge into the spend windows and the balance, and writes
-- the generation record. The charge never takes the balance below zero: an operator's negative grant may
-- have left less than what is held, and what the held credit no longer covers is not charged.
CREATE FUNCTION gw_apply_charge(
  p_account_id text, p_key_id text, p_released bigint, p_charge bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer)
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
  INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, created_at)
  VALUES (p_generation_id, p_account_id, p_key_id, p_modality, p_model, p_status, p_request, p_usage, v_charge, p_duration_ms, p_now);
END $$;
--> statement-breakpoint

-- gw_settle on the two helpers above; same semantics as migration 0003.
CREATE OR REPLACE FUNCTION gw_settle(
  p_hold_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer)
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
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_held, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms);
  RETURN v_found;
END $$;
--> statement-breakpoint

-- Adds to lease p_lease_id (creating it) at least p_min and at most p_want of the credit that is free for
-- the account and the key, but never more than p_min plus half of what is free beyond p_min, so that other
-- processes serving the same account find credit too. Refuses, taking nothing, when p_min is not free:
-- the outcome names the cap or the balance that refused, exactly as gw_hold does, and the third element
-- says how much the refusing row (the key for a cap, else the account) has held, leases of any process
-- included, so the caller can tell whether credit held elsewhere may come free.
CREATE FUNCTION gw_lease_extend(p_lease_id text, p_account_id text, p_key_id text, p_min bigint, p_want bigint, p_instance_id text, p_now timestamptz)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_free bigint;
  v_balance bigint;
  v_held bigint;
  v_grant bigint;
  v_headrooms bigint[];
  v_caps text[] := ARRAY['daily', 'weekly', 'monthly', 'total'];
  k api_keys%ROWTYPE;
BEGIN
  IF p_min <= 0 OR p_want < p_min THEN
    RAISE EXCEPTION 'a lease extension needs 0 < min <= want';
  END IF;
  PERFORM 1 FROM holds WHERE id = p_lease_id FOR UPDATE;
  IF p_key_id IS NOT NULL THEN
    SELECT * INTO k FROM api_keys WHERE id = p_key_id AND account_id = p_account_id FOR UPDATE;
    IF NOT FOUND OR NOT k.is_active OR k.revoked_at IS NOT NULL THEN
      RETURN ARRAY['key_inactive', '0', '0'];
    END IF;
  END IF;
  SELECT balance_nanos - held_nanos, balance_nanos, held_nanos INTO v_free, v_balance, v_held FROM accounts WHERE id = p_account_id FOR UPDATE;
  IF p_key_id IS NOT NULL THEN
    v_headrooms := gw_cap_headrooms(k, p_now);
    FOR i IN 1..4 LOOP
      IF v_headrooms[i] < p_min THEN
        RETURN ARRAY[v_caps[i], '0', k.held_nanos::text];
      END IF;
      v_free := LEAST(v_free, v_headrooms[i]);
    END LOOP;
  END IF;
  IF v_balance IS NULL OR v_balance <= 0 OR v_free < p_min THEN
    RETURN ARRAY['balance', '0', COALESCE(v_held, 0)::text];
  END IF;
  v_grant := LEAST(p_want, p_min + (v_free - p_min) / 2);
  UPDATE accounts SET held_nanos = held_nanos + v_grant WHERE id = p_account_id;
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET held_nanos = held_nanos + v_grant WHERE id = p_key_id;
  END IF;
  INSERT INTO holds (id, account_id, api_key_id, amount_nanos, instance_id, created_at)
  VALUES (p_lease_id, p_account_id, p_key_id, v_grant, p_instance_id, p_now)
  ON CONFLICT (id) DO UPDATE SET amount_nanos = holds.amount_nanos + EXCLUDED.amount_nanos;
  RETURN ARRAY['ok', v_grant::text, '0'];
END $$;
--> statement-breakpoint

CREATE FUNCTION gw_lease_extend_batch(p_items jsonb, p_instance_id text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_results jsonb := '[]'::jsonb;
BEGIN
  PERFORM 1 FROM holds WHERE id IN (SELECT i->>'lease' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    v_results := v_results || jsonb_build_array(to_jsonb(gw_lease_extend(
      v_item->>'lease', v_item->>'account', v_item->>'key', (v_item->>'min')::bigint, (v_item->>'want')::bigint,
      p_instance_id, (v_item->>'now')::timestamptz)));
  END LOOP;
  RETURN v_results;
END $$;
--> statement-breakpoint

-- Charges p_cost out of lease p_lease_id (the lease shrinks by it) and writes the generation record. When
-- the lease no longer holds p_cost (it was released as orphaned), the charge is limited to what the
-- account and the key have free, like a settlement whose hold is gone. Returns whether the lease held it.
CREATE FUNCTION gw_lease_settle(
  p_lease_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer)
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
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_released, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms);
  RETURN v_released = p_cost;
END $$;
--> statement-breakpoint

-- gw_settle_batch also settles out of leases: an item with "lease": true is charged out of the lease its
-- "hold" names (gw_lease_settle), any other as gw_settle, in array order, with the same locks up front.
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
           NULLIF(v_item->'usage', 'null'::jsonb) AS usage, (v_item->>'durationMs')::integer AS duration_ms
      INTO v_args;
    IF COALESCE((v_item->>'lease')::boolean, false) THEN
      v_found := v_found || gw_lease_settle(v_args.hold, v_args.account, v_args.key, v_args.cost, v_args.now, v_args.generation,
        v_args.modality, v_args.model, v_args.status, v_args.request, v_args.usage, v_args.duration_ms);
    ELSE
      v_found := v_found || gw_settle(v_args.hold, v_args.account, v_args.key, v_args.cost, v_args.now, v_args.generation,
        v_args.modality, v_args.model, v_args.status, v_args.request, v_args.usage, v_args.duration_ms);
    END IF;
  END LOOP;
  RETURN v_found;
END $$;
--> statement-breakpoint

-- Gives back up to p_amount of lease p_lease_id, never more than it holds; returns what was given back.
CREATE FUNCTION gw_lease_shrink(p_lease_id text, p_amount bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  h holds%ROWTYPE;
  v_returned bigint;
BEGIN
  IF p_amount < 0 THEN
    RAISE EXCEPTION 'a lease cannot shrink by a negative amount';
  END IF;
  SELECT * INTO h FROM holds WHERE id = p_lease_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  v_returned := LEAST(p_amount, h.amount_nanos);
  UPDATE holds SET amount_nanos = amount_nanos - v_returned WHERE id = p_lease_id;
  IF h.api_key_id IS NOT NULL THEN
    UPDATE api_keys SET held_nanos = held_nanos - v_returned WHERE id = h.api_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - v_returned WHERE id = h.account_id;
  RETURN v_returned;
END $$;
