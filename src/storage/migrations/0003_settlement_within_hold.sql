-- A settlement never charges more than its hold, whatever usage an upstream reported. When the hold is
-- gone (released as orphaned while the request was still running), the charge is limited to what the
-- account and the key have free at that moment, so no balance goes below zero and no key past a cap.
-- Locks keep the global order of every ledger function: hold, then api key, then account.
CREATE OR REPLACE FUNCTION gw_settle(
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
  v_charge bigint;
  v_free bigint;
  k api_keys%ROWTYPE;
BEGIN
  IF p_cost < 0 THEN
    RAISE EXCEPTION 'cost must not be negative';
  END IF;
  DELETE FROM holds WHERE id = p_hold_id RETURNING amount_nanos INTO v_held;
  v_found := FOUND;
  v_held := COALESCE(v_held, 0);
  IF v_found THEN
    v_charge := LEAST(p_cost, v_held);
  ELSE
    v_charge := p_cost;
    IF p_key_id IS NOT NULL THEN
      SELECT * INTO k FROM api_keys WHERE id = p_key_id FOR UPDATE;
      IF FOUND THEN
        IF k.daily_limit_nanos IS NOT NULL THEN
          v_charge := LEAST(v_charge, k.daily_limit_nanos - (CASE WHEN k.day_start >= v_day THEN k.spent_day_nanos ELSE 0 END) - k.held_nanos);
        END IF;
        IF k.weekly_limit_nanos IS NOT NULL THEN
          v_charge := LEAST(v_charge, k.weekly_limit_nanos - (CASE WHEN k.week_start >= v_week THEN k.spent_week_nanos ELSE 0 END) - k.held_nanos);
        END IF;
        IF k.monthly_limit_nanos IS NOT NULL THEN
          v_charge := LEAST(v_charge, k.monthly_limit_nanos - (CASE WHEN k.month_start >= v_month THEN k.spent_month_nanos ELSE 0 END) - k.held_nanos);
        END IF;
        IF k.total_limit_nanos IS NOT NULL THEN
          v_charge := LEAST(v_charge, k.total_limit_nanos - k.spent_total_nanos - k.held_nanos);
        END IF;
      END IF;
    END IF;
    SELECT balance_nanos - held_nanos INTO v_free FROM accounts WHERE id = p_account_id FOR UPDATE;
    v_charge := GREATEST(0, LEAST(v_charge, COALESCE(v_free, 0)));
  END IF;
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET
      held_nanos = held_nanos - v_held,
      spent_total_nanos = spent_total_nanos + v_charge,
      spent_day_nanos = (CASE WHEN day_start >= v_day THEN spent_day_nanos ELSE 0 END) + v_charge,
      day_start = GREATEST(day_start, v_day),
      spent_week_nanos = (CASE WHEN week_start >= v_week THEN spent_week_nanos ELSE 0 END) + v_charge,
      week_start = GREATEST(week_start, v_week),
      spent_month_nanos = (CASE WHEN month_start >= v_month THEN spent_month_nanos ELSE 0 END) + v_charge,
      month_start = GREATEST(month_start, v_month)
    WHERE id = p_key_id;
  END IF;
  UPDATE accounts SET held_nanos = held_nanos - v_held, balance_nanos = balance_nanos - v_charge WHERE id = p_account_id;
  INSERT INTO generations (id, account_id, api_key_id, modality, model, status, request, usage, usd_cost_nanos, duration_ms, created_at)
  VALUES (p_generation_id, p_account_id, p_key_id, p_modality, p_model, p_status, p_request, p_usage, v_charge, p_duration_ms, p_now);
  RETURN v_found;
END $$;
