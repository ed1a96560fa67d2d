-- Batched forms of gw_hold and gw_settle: under load one process sends many holds (or settlements) as
-- one statement, so one transaction and one WAL flush serve them all. Each item keeps the exact semantics
-- of the single call (with its own clock reading), applied in array order. Rows are locked up front in the
-- global order every ledger function follows (holds, then api keys by id, then accounts by id), so batches,
-- single calls and orphan sweeps cannot deadlock one another.

CREATE FUNCTION gw_hold_batch(p_items jsonb, p_instance_id text)
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
--> statement-breakpoint

CREATE FUNCTION gw_settle_batch(p_items jsonb)
RETURNS boolean[] LANGUAGE plpgsql AS $$
DECLARE
  v_item jsonb;
  v_found boolean[] := '{}';
BEGIN
  PERFORM 1 FROM holds WHERE id IN (SELECT i->>'hold' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM api_keys WHERE id IN (SELECT i->>'key' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM accounts WHERE id IN (SELECT i->>'account' FROM jsonb_array_elements(p_items) i) ORDER BY id FOR UPDATE;
  FOR v_item IN SELECT i FROM jsonb_array_elements(p_items) i LOOP
    v_found := v_found || gw_settle(
      v_item->>'hold', v_item->>'account', v_item->>'key', (v_item->>'cost')::bigint, (v_item->>'now')::timestamptz,
      v_item->>'generation', v_item->>'modality', v_item->>'model', v_item->>'status',
      NULLIF(v_item->'request', 'null'::jsonb), NULLIF(v_item->'usage', 'null'::jsonb), (v_item->>'durationMs')::integer);
  END LOOP;
  RETURN v_found;
END $$;
