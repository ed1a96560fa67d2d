-- Settlement of a job billed by what it delivered (seconds of video or audio): its hold was the estimate for
-- the asked length, and a longer delivery is charged beyond it out of what the account and the key still
-- have free at that moment, never more, so no balance goes below zero and no key past a cap. A delivery
-- within the hold is charged as gw_settle charges it. Lock order as everywhere: hold, then key, then account.
CREATE FUNCTION gw_settle_delivered(
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
  v_held := COALESCE(v_held, 0);
  IF p_cost <= v_held THEN
    v_charge := p_cost;
  ELSE
    -- The held sums still count v_held here (gw_apply_charge moves it out), so what is free is beyond this hold.
    v_charge := v_held + LEAST(p_cost - v_held, gw_free_credit(p_account_id, p_key_id, p_now));
  END IF;
  PERFORM gw_apply_charge(p_account_id, p_key_id, v_held, v_charge, p_now, p_generation_id, p_modality, p_model, p_status, p_request, p_usage, p_duration_ms);
  RETURN v_found;
END $$;
