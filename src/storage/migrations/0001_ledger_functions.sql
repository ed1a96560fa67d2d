-- Money statements that must be atomic live here as single-call functions: one round trip each,
-- row locks always taken in the order hold -> api key -> account, so concurrent calls cannot deadlock.

CREATE FUNCTION gw_hold(p_hold_id text, p_account_id text, p_key_id text, p_amount bigint, p_instance_id text, p_now timestamptz)
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
--> statement-breakpoint

-- Charges p_cost to the account and the key's spend windows (windows of p_now, UTC), releases the hold
-- and writes the generation record, all in the one statement. Returns false when the hold was already
-- gone (reconciled as orphaned): the charge and the record are still written, since the usage was real.
CREATE FUNCTION gw_settle(
  p_hold_id text, p_account_id text, p_key_id text, p_cost bigint, p_now timestamptz,
  p_generation_id text, p_modality text, p_model text, p_status text,
  p_request jsonb, p_usage jsonb, p_duration_ms integer)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_week date := date_trunc('week', p_now AT TIME ZONE 'UTC')::date;
  v_month date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  v_held bigint;
  v_found boolean;
BEGIN
  IF p_cost < 0 THEN
    RAISE EXCEPTION 'cost must not be negative';
  END IF;
  DELETE FROM holds WHERE id = p_hold_id RETURNING amount_nanos INTO v_held;
  v_found := FOUND;
  v_held := COALESCE(v_held, 0);
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET
      held_nanos = held_nanos - v_held,
      spent_total_nanos = spent_total_nanos + p_cost,
      spent_day_nanos = (CASE WHEN day_start >= v_day THEN spent_day_nanos ELSE 0 END) + p_cost,
      day_start = GREATEST(day_start, v_day),
      spent_week_nanos = (CASE WHEN week_start >= v_week THEN spent_week_nanos ELSE 0 END) + p_cost,
      week_start = GREATEST(week_start, v_week),
      spent_month_nanos = (CASE WHEN month_start >= v_month THEN spent_month_nanos ELSE 0 END) + p_cost,
      month_start = GREATEST(month_start, v_month)
    WHERE id = p_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - v_held, balance_nanos = balance_nanos - p_cost WHERE id = p_account_id;
  INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, created_at)
  VALUES (p_generation_id, p_account_id, p_key_id, p_modality, p_model, p_status, p_request, p_usage, p_cost, p_duration_ms, p_now);
  RETURN v_found;
END $$;
--> statement-breakpoint

CREATE FUNCTION gw_release(p_hold_id text)
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
--> statement-breakpoint

-- Releases every hold whose owning process is not p_instance_id and has not heartbeated since
-- p_stale_before (killed or hung); forgets such processes. Returns how many holds were released.
-- The batch takes its locks class by class (every hold, then every key, then every account, each in id
-- order) rather than hold by hold: releasing one hold after another would lock an account and then the
-- key of the next hold, and deadlock with a concurrent gw_hold / gw_settle / sweep on the same account.
CREATE FUNCTION gw_release_orphaned_holds(p_instance_id text, p_stale_before timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_ids text[];
BEGIN
  SELECT array_agg(locked.id) INTO v_ids FROM (
    SELECT h.id FROM holds h
     WHERE h.instance_id <> p_instance_id
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
