-- gw_settle_batch takes an item's `share` of its lease: what the settlement takes of the lease's row when that is
-- less than its claim. A relayed call whose upstream reads input its hold does not count (a stored conversation,
-- a file) costs what no hold bounds, and claims its whole cost: a claim past the credit the lease promised the request takes
-- the lease's unpromised credit (the share, as the process counts it), and the rest out of what the account and
-- the key have free beyond every hold (gw_free_credit), as a claim past a hold row of its own already was. Without
-- `share` an item takes its claim of the lease, as before. A row holding less than the share (the process counted
-- more unpromised credit than it holds) gives what it has, and the rest is claimed out of free credit; the item is
-- reported held when the row held at least the credit promised to the request (`promised`, sent with `share`).
CREATE OR REPLACE FUNCTION gw_settle_batch(p_items jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_results jsonb[] := '{}';
  -- The rows items are applied to; a dirty one has changes not yet written.
  v_lease_id text;
  v_lease_nanos bigint;
  v_lease_dirty boolean := false;
  v_key_loaded boolean := false;
  v_key_id text;
  k api_keys%ROWTYPE;
  v_key_dirty boolean := false;
  v_account_loaded boolean := false;
  v_account_id text;
  v_account_found boolean;
  v_balance bigint;
  v_account_held bigint;
  v_account_dirty boolean := false;
  -- One item's values.
  v_hold_id text;
  v_claim bigint;
  v_share bigint;
  v_own bigint;
  v_cost bigint;
  v_now timestamptz;
  v_day date;
  v_week date;
  v_month date;
  v_held bigint;
  v_was_held boolean;
  v_claimed bigint;
  v_charged bigint;
  v_usage jsonb;
  v_short_usage jsonb;
BEGIN
  PERFORM 1 FROM holds WHERE id IN (SELECT i->>'hold' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    v_hold_id := v_item->>'hold';
    v_claim := (v_item->>'claim')::bigint;
    v_cost := (v_item->>'cost')::bigint;
    v_now := (v_item->>'now')::timestamptz;
    IF v_claim < 0 OR v_cost < 0 THEN
      RAISE EXCEPTION 'a charge cannot be negative';
    END IF;

    -- The rows of this item, the ones of the item before written first when they are others.
    IF v_lease_dirty AND v_lease_id IS DISTINCT FROM v_hold_id THEN
      UPDATE holds SET amount_nanos = v_lease_nanos WHERE id = v_lease_id;
      v_lease_dirty := false;
    END IF;
    IF v_key_loaded AND v_key_id IS DISTINCT FROM v_item->>'key' THEN
      IF v_key_dirty THEN
        PERFORM gw_write_key_spend(k);
        v_key_dirty := false;
      END IF;
      v_key_loaded := false;
    END IF;
    IF NOT v_key_loaded THEN
      v_key_id := v_item->>'key';
      k := NULL;
      IF v_key_id IS NOT NULL THEN
        SELECT * INTO k FROM api_keys WHERE id = v_key_id;
      END IF;
      v_key_loaded := true;
    END IF;
    IF v_account_loaded AND v_account_id IS DISTINCT FROM v_item->>'account' THEN
      IF v_account_dirty THEN
        UPDATE accounts SET balance_nanos = v_balance, held_nanos = v_account_held WHERE id = v_account_id;
        v_account_dirty := false;
      END IF;
      v_account_loaded := false;
    END IF;
    IF NOT v_account_loaded THEN
      v_account_id := v_item->>'account';
      SELECT balance_nanos, held_nanos INTO v_balance, v_account_held FROM accounts WHERE id = v_account_id;
      v_account_found := FOUND;
      v_account_loaded := true;
    END IF;

    -- What was held for it.
    IF COALESCE((v_item->>'lease')::boolean, false) THEN
      IF v_lease_id IS NULL OR v_lease_id IS DISTINCT FROM v_hold_id THEN
        v_lease_id := v_hold_id;
        SELECT amount_nanos INTO v_lease_nanos FROM holds WHERE id = v_hold_id;
      END IF;
      v_share := COALESCE((v_item->>'share')::bigint, v_claim);
      IF v_share < 0 OR v_share > v_claim THEN
        RAISE EXCEPTION 'a share of a lease must be from 0 to the claim';
      END IF;
      -- The part of the share the lease promised the request (`promised`, sent with a share; else all of it).
      v_own := LEAST(v_share, COALESCE((v_item->>'promised')::bigint, v_share));
      -- As much of the share as the row has (the process may count more unpromised credit than it holds); the
      -- rest is claimed out of free credit below. Held: the row is there and held the request's own credit, so
      -- the process's count of it was right but perhaps for credit promised to no one.
      v_held := GREATEST(0, LEAST(v_share, COALESCE(v_lease_nanos, 0)));
      v_was_held := v_lease_nanos IS NOT NULL AND v_lease_nanos >= v_own;
      IF v_held > 0 THEN
        v_lease_nanos := v_lease_nanos - v_held;
        v_lease_dirty := true;
      END IF;
    ELSE
      IF v_lease_id = v_hold_id THEN
        IF v_lease_dirty THEN
          UPDATE holds SET amount_nanos = v_lease_nanos WHERE id = v_lease_id;
          v_lease_dirty := false;
        END IF;
        v_lease_id := NULL;
        v_lease_nanos := NULL;
      END IF;
      DELETE FROM holds WHERE id = v_hold_id RETURNING amount_nanos INTO v_held;
      v_was_held := v_held IS NOT NULL;
      v_held := COALESCE(v_held, 0);
    END IF;

    -- What it claims: past the hold (or the share) only out of what is free beyond every hold, read from the rows as
    -- they stand (their held sums still count this item's hold, which it is charged out of first).
    v_claimed := LEAST(v_claim, v_held);
    IF v_claim > v_held THEN
      IF v_key_dirty THEN
        PERFORM gw_write_key_spend(k);
        v_key_dirty := false;
      END IF;
      IF v_account_dirty THEN
        UPDATE accounts SET balance_nanos = v_balance, held_nanos = v_account_held WHERE id = v_account_id;
        v_account_dirty := false;
      END IF;
      v_claimed := v_claimed + LEAST(v_claim - v_held, gw_free_credit(v_account_id, v_key_id, v_now));
    END IF;

    -- What it is charged: never past the balance, nor past a cap (LEAST ignores the NULL of no cap, no key).
    v_charged := GREATEST(0, LEAST(v_claimed, COALESCE(v_balance, 0), gw_spend_headroom(k, v_now)));
    v_usage := NULLIF(v_item->'usage', 'null'::jsonb);
    v_short_usage := NULL;
    IF v_charged < v_cost THEN
      v_usage := (CASE WHEN jsonb_typeof(v_usage) = 'object' THEN v_usage ELSE '{}'::jsonb END)
        || jsonb_build_object('unchargedUsdCost', trim_scale((v_cost - v_charged)::numeric / 1000000000));
      IF v_usage ? 'usdCost' THEN
        v_usage := v_usage || jsonb_build_object('usdCost', trim_scale(v_charged::numeric / 1000000000));
      END IF;
      v_short_usage := v_usage;
    END IF;

    -- The key's and the account's sums move; a key is written before one of its windows rolls over.
    IF k.id IS NOT NULL THEN
      v_day := (v_now AT TIME ZONE 'UTC')::date;
      v_week := date_trunc('week', v_now AT TIME ZONE 'UTC')::date;
      v_month := date_trunc('month', v_now AT TIME ZONE 'UTC')::date;
      IF v_key_dirty AND (k.day_start < v_day OR k.week_start < v_week OR k.month_start < v_month) THEN
        PERFORM gw_write_key_spend(k);
      END IF;
      k.held_nanos := k.held_nanos - v_held;
      k.spent_total_nanos := k.spent_total_nanos + v_charged;
      k.spent_day_nanos := (CASE WHEN k.day_start >= v_day THEN k.spent_day_nanos ELSE 0 END) + v_charged;
      k.day_start := GREATEST(k.day_start, v_day);
      k.spent_week_nanos := (CASE WHEN k.week_start >= v_week THEN k.spent_week_nanos ELSE 0 END) + v_charged;
      k.week_start := GREATEST(k.week_start, v_week);
      k.spent_month_nanos := (CASE WHEN k.month_start >= v_month THEN k.spent_month_nanos ELSE 0 END) + v_charged;
      k.month_start := GREATEST(k.month_start, v_month);
      v_key_dirty := true;
    END IF;
    IF v_account_found THEN
      v_account_held := v_account_held - v_held;
      v_balance := v_balance - v_charged;
      v_account_dirty := true;
    END IF;
    INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, route, price_version, created_at)
    VALUES (v_item->>'generation', v_account_id, v_key_id, v_item->>'modality', v_item->>'model', v_item->>'status',
      NULLIF(v_item->'request', 'null'::jsonb), v_usage, v_charged, (v_item->>'durationMs')::integer,
      NULLIF(v_item->'route', 'null'::jsonb), v_item->>'priceVersion', v_now);
    v_results := v_results || jsonb_build_array(v_was_held, v_charged::text, v_short_usage);
  END LOOP;
  IF v_lease_dirty THEN
    UPDATE holds SET amount_nanos = v_lease_nanos WHERE id = v_lease_id;
  END IF;
  IF v_key_dirty THEN
    PERFORM gw_write_key_spend(k);
  END IF;
  IF v_account_dirty THEN
    UPDATE accounts SET balance_nanos = v_balance, held_nanos = v_account_held WHERE id = v_account_id;
  END IF;
  RETURN to_jsonb(v_results);
END $$;
