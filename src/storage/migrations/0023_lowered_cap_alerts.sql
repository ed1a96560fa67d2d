-- api_key.cap_reached is announced when a key's caps change too, not only when it spends: an operator or the
-- owner lowering a cap to or below what the key already spent in its window (or to within the 80% level) is
-- told the levels now reached, with the payload and the once-per-level-per-window marks that spending uses, so
-- that spending later past the same level in the same window announces nothing more.
-- Announces the levels (80, 100) of cap p_cap of key p_key that spend p_spent has reached under p_limit and not
-- yet announced in window p_window_start. A cap of 0 is reached by any spend of its window; none is reached by
-- no spend (a cap of 0 on a key that spent nothing in the window announces nothing).
CREATE FUNCTION webhook_cap_levels(p_key api_keys, p_cap text, p_limit bigint, p_spent bigint, p_window_start text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_level integer;
BEGIN
  IF p_limit IS NULL OR p_limit < 0 OR p_spent <= 0 THEN
    RETURN;
  END IF;
  FOREACH v_level IN ARRAY ARRAY[80, 100] LOOP
    CONTINUE WHEN p_spent::numeric * 100 < p_limit::numeric * v_level;
    INSERT INTO api_key_cap_alerts (api_key_id, cap, level, window_start)
    VALUES (p_key.id, p_cap, v_level, COALESCE(p_window_start, 'none')) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      PERFORM webhook_enqueue(p_key.account_id, 'api_key.cap_reached', jsonb_build_object(
        'apiKeyId', p_key.id, 'name', p_key.name, 'cap', p_cap, 'level', v_level,
        'limit', webhook_nanos_usd(p_limit), 'spent', webhook_nanos_usd(p_spent),
        'windowStart', p_window_start));
    END IF;
  END LOOP;
END;
$$;--> statement-breakpoint
-- Spending: the settlement has just moved each window's counter and start to the window it charged in.
CREATE OR REPLACE FUNCTION webhook_cap_reached() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_cap_levels(NEW, 'daily', NEW.daily_limit_nanos, NEW.spent_day_nanos, NEW.day_start::text);
  PERFORM webhook_cap_levels(NEW, 'weekly', NEW.weekly_limit_nanos, NEW.spent_week_nanos, NEW.week_start::text);
  PERFORM webhook_cap_levels(NEW, 'monthly', NEW.monthly_limit_nanos, NEW.spent_month_nanos, NEW.month_start::text);
  PERFORM webhook_cap_levels(NEW, 'total', NEW.total_limit_nanos, NEW.spent_total_nanos, 'total');
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- A cap changed: only the caps that changed are read, each against the spend of the window running now by the
-- database's clock (the clock settlements charge windows by). A counter whose start is older than that window
-- is an earlier window's spend, 0 in this one, as settlements and the key's spend view count it; a start at or
-- past it is where the spend lies, and the mark the next settlement of that window would make.
CREATE FUNCTION webhook_cap_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamp := now() AT TIME ZONE 'UTC';
  v_day date := v_now::date;
  v_week date := date_trunc('week', v_now)::date;
  v_month date := date_trunc('month', v_now)::date;
BEGIN
  IF NEW.daily_limit_nanos IS DISTINCT FROM OLD.daily_limit_nanos THEN
    PERFORM webhook_cap_levels(NEW, 'daily', NEW.daily_limit_nanos,
      CASE WHEN NEW.day_start >= v_day THEN NEW.spent_day_nanos ELSE 0 END, NEW.day_start::text);
  END IF;
  IF NEW.weekly_limit_nanos IS DISTINCT FROM OLD.weekly_limit_nanos THEN
    PERFORM webhook_cap_levels(NEW, 'weekly', NEW.weekly_limit_nanos,
      CASE WHEN NEW.week_start >= v_week THEN NEW.spent_week_nanos ELSE 0 END, NEW.week_start::text);
  END IF;
  IF NEW.monthly_limit_nanos IS DISTINCT FROM OLD.monthly_limit_nanos THEN
    PERFORM webhook_cap_levels(NEW, 'monthly', NEW.monthly_limit_nanos,
      CASE WHEN NEW.month_start >= v_month THEN NEW.spent_month_nanos ELSE 0 END, NEW.month_start::text);
  END IF;
  IF NEW.total_limit_nanos IS DISTINCT FROM OLD.total_limit_nanos THEN
    PERFORM webhook_cap_levels(NEW, 'total', NEW.total_limit_nanos, NEW.spent_total_nanos, 'total');
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- As the spending check, only keys of accounts with a subscribed endpoint (cap_alerts) pay for it.
CREATE TRIGGER "api_keys_cap_changed"
  AFTER UPDATE OF "daily_limit_nanos", "weekly_limit_nanos", "monthly_limit_nanos", "total_limit_nanos" ON "api_keys"
  FOR EACH ROW
  WHEN (NEW.cap_alerts AND (NEW.daily_limit_nanos IS DISTINCT FROM OLD.daily_limit_nanos
        OR NEW.weekly_limit_nanos IS DISTINCT FROM OLD.weekly_limit_nanos
        OR NEW.monthly_limit_nanos IS DISTINCT FROM OLD.monthly_limit_nanos
        OR NEW.total_limit_nanos IS DISTINCT FROM OLD.total_limit_nanos))
  EXECUTE FUNCTION webhook_cap_changed();
