-- The current definition of every ledger function, as the migrations leave it (each was last defined by the
-- migration named above it). The migrations stay the way a database gets there; this file is where to read
-- the ledger, and test/integration/ledger-functions.test.ts checks it matches a freshly migrated database.
-- A migration that changes a ledger function changes it here too.
--
-- Money statements that must be atomic are single-call functions: one round trip each, row locks always
-- taken in the order hold -> api key -> account, so concurrent calls cannot deadlock.

-- [migration 0001_ledger_functions]
-- Holds p_amount when it fits the account's available balance and every cap of the key (spent in the window
-- + held + p_amount <= cap): 'ok', else which refused ('balance', a cap's name, or 'key_inactive').
CREATE OR REPLACE FUNCTION gw_hold(p_hold_id text, p_account_id text, p_key_id text, p_amount bigint, p_instance_id text, p_now timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_week date := date_trunc('week', p_now AT TIME ZONE 'UTC')::date;
  v_month date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  k api_keys%ROWTYPE;
BEGIN
  IF p_amount < 0 THEN
    RAISE EXCEPTION 'hold amount must not be negative';
  END IF;
  IF p_key_id IS NOT NULL THEN
    SELECT * INTO k FROM api_keys WHERE id = p_key_id AND account_id = p_account_id FOR UPDATE;
    IF NOT FOUND OR NOT k.is_active OR k.revoked_at IS NOT NULL THEN
      RETURN 'key_inactive';
    END IF;
    IF k.daily_limit_nanos IS NOT NULL
       AND (CASE WHEN k.day_start >= v_day THEN k.spent_day_nanos ELSE 0 END) + k.held_nanos + p_amount > k.daily_limit_nanos THEN
      RETURN 'daily';
    END IF;
    IF k.weekly_limit_nanos IS NOT NULL
       AND (CASE WHEN k.week_start >= v_week THEN k.spent_week_nanos ELSE 0 END) + k.held_nanos + p_amount > k.weekly_limit_nanos THEN
      RETURN 'weekly';
    END IF;
    IF k.monthly_limit_nanos IS NOT NULL
       AND (CASE WHEN k.month_start >= v_month THEN k.spent_month_nanos ELSE 0 END) + k.held_nanos + p_amount > k.monthly_limit_nanos THEN
      RETURN 'monthly';
    END IF;
    IF k.total_limit_nanos IS NOT NULL AND k.spent_total_nanos + k.held_nanos + p_amount > k.total_limit_nanos THEN
      RETURN 'total';
    END IF;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos + p_amount
   WHERE id = p_account_id AND balance_nanos > 0 AND balance_nanos - held_nanos >= p_amount;
  IF NOT FOUND THEN
    RETURN 'balance';
  END IF;
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET held_nanos = held_nanos + p_amount WHERE id = p_key_id;
  END IF;
  INSERT INTO holds (id, account_id, api_key_id, amount_nanos, instance_id, created_at)
  VALUES (p_hold_id, p_account_id, p_key_id, p_amount, p_instance_id, p_now);
  RETURN 'ok';
END $$;

-- [migration 0002_ledger_batches]
-- Batched forms of gw_hold and gw_settle: under load one process sends many holds (or settlements) as
-- one statement, so one transaction and one WAL flush serve them all. Each item keeps the exact semantics
-- of the single call (with its own clock reading), applied in array order. Rows are locked up front in the
-- global order every ledger function follows (holds, then api keys by id, then accounts by id), so batches,
-- single calls and orphan sweeps cannot deadlock one another.
CREATE OR REPLACE FUNCTION gw_hold_batch(p_items jsonb, p_instance_id text)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_outcomes text[] := '{}';
BEGIN
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    v_outcomes := v_outcomes || gw_hold(v_item->>'hold', v_item->>'account', v_item->>'key', (v_item->>'amount')::bigint, p_instance_id, (v_item->>'now')::timestamptz);
  END LOOP;
  RETURN v_outcomes;
END $$;

-- [migration 0001_ledger_functions]
-- Releases hold p_hold_id without charging anything; false when it was already gone.
CREATE OR REPLACE FUNCTION gw_release(p_hold_id text)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  h holds%ROWTYPE;
BEGIN
  DELETE FROM holds WHERE id = p_hold_id RETURNING * INTO h;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF h.api_key_id IS NOT NULL THEN
    UPDATE api_keys SET held_nanos = held_nanos - h.amount_nanos WHERE id = h.api_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - h.amount_nanos WHERE id = h.account_id;
  RETURN true;
END $$;

-- [migration 0005_media_jobs]
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

-- [migration 0004_credit_leases]
-- Headroom left under each cap of key k at p_now (its limit less the spend of the current window and what
-- it holds), in the order daily, weekly, monthly, total; NULL where the key has no such cap.
CREATE OR REPLACE FUNCTION gw_cap_headrooms(k api_keys, p_now timestamptz)
RETURNS bigint[] LANGUAGE sql STABLE AS $$
  SELECT ARRAY[
    k.daily_limit_nanos - (CASE WHEN k.day_start >= (p_now AT TIME ZONE 'UTC')::date THEN k.spent_day_nanos ELSE 0 END) - k.held_nanos,
    k.weekly_limit_nanos - (CASE WHEN k.week_start >= date_trunc('week', p_now AT TIME ZONE 'UTC')::date THEN k.spent_week_nanos ELSE 0 END) - k.held_nanos,
    k.monthly_limit_nanos - (CASE WHEN k.month_start >= date_trunc('month', p_now AT TIME ZONE 'UTC')::date THEN k.spent_month_nanos ELSE 0 END) - k.held_nanos,
    k.total_limit_nanos - k.spent_total_nanos - k.held_nanos]
$$;

-- [migration 0004_credit_leases]
-- What a charge may take when the credit it was held against is gone (released as orphaned while the
-- request ran): what the account and the key still have free at p_now. Locks the key, then the account.
CREATE OR REPLACE FUNCTION gw_free_credit(p_account_id text, p_key_id text, p_now timestamptz)
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

-- [migration 0004_credit_leases]
-- Adds to lease p_lease_id (creating it) at least p_min and at most p_want of the credit that is free for
-- the account and the key, but never more than p_min plus half of what is free beyond p_min, so that other
-- processes serving the same account find credit too. Refuses, taking nothing, when p_min is not free:
-- the outcome names the cap or the balance that refused, exactly as gw_hold does, and the third element
-- says how much the refusing row (the key for a cap, else the account) has held, leases of any process
-- included, so the caller can tell whether credit held elsewhere may come free.
CREATE OR REPLACE FUNCTION gw_lease_extend(p_lease_id text, p_account_id text, p_key_id text, p_min bigint, p_want bigint, p_instance_id text, p_now timestamptz)
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

-- [migration 0004_credit_leases]
-- gw_lease_extend for many leases of one process in one statement, in array order, locks taken up front.
CREATE OR REPLACE FUNCTION gw_lease_extend_batch(p_items jsonb, p_instance_id text)
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

-- [migration 0004_credit_leases]
-- Gives back up to p_amount of lease p_lease_id, never more than it holds; returns what was given back.
CREATE OR REPLACE FUNCTION gw_lease_shrink(p_lease_id text, p_amount bigint)
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

-- [migration 0009_settlement_floors]
-- What key k may still spend at p_now: the smallest of its caps less the spend of the cap's current window
-- (holds not counted: they are promises, not spend). NULL when the key has no cap (or there is no key).
CREATE OR REPLACE FUNCTION gw_spend_headroom(k api_keys, p_now timestamptz)
RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT min(h + k.held_nanos) FROM unnest(gw_cap_headrooms(k, p_now)) h
$$;

-- [migration 0018_settlement_rows_once]
-- Writes the spend columns of key k as they stand in k (a settlement batch's copy of the row, kept under its
-- lock): its held sum, its total spend and each window's spend and start.
CREATE OR REPLACE FUNCTION gw_write_key_spend(k api_keys)
RETURNS void LANGUAGE sql AS $$
  UPDATE api_keys SET
    held_nanos = k.held_nanos,
    spent_total_nanos = k.spent_total_nanos,
    spent_day_nanos = k.spent_day_nanos, day_start = k.day_start,
    spent_week_nanos = k.spent_week_nanos, week_start = k.week_start,
    spent_month_nanos = k.spent_month_nanos, month_start = k.month_start
  WHERE id = k.id
$$;

-- [migration 0024_settle_lease_share]
-- Settlements in one statement, in array order, with every lock taken up front in the global order. Answers,
-- per item, [was held, charged (text), the usage as written when the cost was not charged whole, else null].
-- Each item's credit is hold row `hold` (deleted: the whole hold is released), or with `lease` the share
-- `share` of lease `hold` (the lease shrinks by it; the claim when absent). The claim is charged within what is
-- still held, and past it (media billed on delivered duration, a call whose upstream read input the gateway was
-- not sent, or a hold released as orphaned meanwhile) out of what the account and the key have free
-- (gw_free_credit); then never past the balance nor past any cap of the key as they stand
-- now. The held sums move by what was released, and the generation record is written. When less than `cost`
-- (what the generation cost) is charged, the record's usage says how much was not (`unchargedUsdCost`) and its
-- `usdCost`, when it has one, is what was charged; that usage is answered.
-- Items are applied to copies of the lease, key and account rows they name, and each row is written once, when
-- an item names another row, before a key's spend window rolls over (so that its cap alerts see the last
-- spend of each window) and at the end: n settlements of one lease update three rows once, not n times each.
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

-- [migration 0018_settlement_rows_once]
-- Settles one generation inside the caller's transaction (a media job's): gw_settle_batch of that one item,
-- its answer as columns.
CREATE OR REPLACE FUNCTION gw_settle(
  p_hold_id text, p_from_lease boolean, p_account_id text, p_key_id text, p_claim bigint, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer, p_route jsonb, p_price_version text,
  OUT was_held boolean, OUT charged bigint, OUT short_usage jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  v_settled jsonb;
BEGIN
  v_settled := gw_settle_batch(jsonb_build_array(jsonb_build_object(
    'hold', p_hold_id, 'lease', p_from_lease, 'account', p_account_id, 'key', p_key_id,
    'claim', p_claim, 'cost', p_cost, 'now', p_now, 'generation', p_generation_id, 'modality', p_modality,
    'model', p_model, 'status', p_status, 'request', p_request, 'usage', p_usage, 'durationMs', p_duration_ms,
    'route', p_route, 'priceVersion', p_price_version))) -> 0;
  was_held := (v_settled->>0)::boolean;
  charged := (v_settled->>1)::bigint;
  short_usage := NULLIF(v_settled->2, 'null'::jsonb);
END $$;
