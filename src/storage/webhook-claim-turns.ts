import { type SQL, sql } from 'drizzle-orm';

/**
 * The statement that claims up to `limit` due webhook deliveries for `owner` for `claimSeconds`, answering each
 * claimed delivery with its endpoint's URL, state and sealed secret.
 *
 * The sending slots are shared out in turns, not first in, first out: one account's backlog (endpoints that
 * never answer, each attempt holding a slot for the whole time-out) would otherwise keep every other
 * account's events waiting behind it. A due delivery's turn in its account is the number of the account's
 * deliveries in flight (claims of every process that have not run out) plus its place among the account's
 * due ones; the lowest turns go first, the oldest first among equal turns. An account with nothing under way
 * therefore takes the next slot that frees, whatever others have queued: it waits one attempt at most. Within
 * an account, the same turns are taken between its endpoints first, so one endpoint's backlog does not hold
 * back the account's others. Turns rather than a cap on each account's deliveries in flight: a cap would
 * need a number that suits every deployment's count of processes and slots, and would leave slots idle while
 * only one account has work; turns keep every slot busy and still bound another account's wait.
 *
 * Each endpoint with pending deliveries is found by a skip over the pending index, and only its first `limit`
 * due deliveries are read (migration 0025): the cost grows with the number of endpoints waiting, not with the
 * size of any backlog. The chosen rows are then locked `FOR UPDATE SKIP LOCKED` in turn order and checked again,
 * so processes claiming at once never take one delivery twice.
 */
export function claimInTurns({
  owner,
  limit,
  claimSeconds,
}: {
  owner: string;
  limit: number;
  claimSeconds: number;
}): SQL {
  // Each step of `waiting` is one descent of the pending index to the next endpoint: a skip scan, whatever the
  // size of the endpoints' backlogs.
  return sql`WITH RECURSIVE waiting AS (
               (SELECT endpoint_id FROM webhook_deliveries
                 WHERE state IN ('queued', 'delivering') ORDER BY endpoint_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                        WHERE d.state IN ('queued', 'delivering') AND d.endpoint_id > w.endpoint_id
                        ORDER BY d.endpoint_id LIMIT 1)
                 FROM waiting w WHERE w.endpoint_id IS NOT NULL),
             -- Claims that ran out are not in flight: their process died, and they are due again.
             endpoints AS (
               SELECT e.id, e.account_id, busy.n AS endpoint_busy,
                      sum(busy.n) OVER (PARTITION BY e.account_id) AS account_busy
                 FROM waiting w JOIN webhook_endpoints e ON e.id = w.endpoint_id
                CROSS JOIN LATERAL (
                      SELECT count(*) AS n FROM webhook_deliveries d
                       WHERE d.endpoint_id = e.id AND d.state = 'delivering' AND d.claim_expires_at >= now()) busy),
             due AS (
               SELECT d.id, d.run_after, d.created_at, e.account_id, e.account_busy,
                      e.endpoint_busy + row_number() OVER (PARTITION BY e.id ORDER BY d.run_after, d.created_at, d.id)
                        AS endpoint_turn
                 FROM endpoints e
                CROSS JOIN LATERAL (
                      SELECT d.id, d.run_after, d.created_at FROM webhook_deliveries d
                       WHERE d.endpoint_id = e.id AND d.state IN ('queued', 'delivering') AND d.run_after <= now()
                         AND (d.claimed_by IS NULL OR d.claim_expires_at < now())
                       ORDER BY d.run_after, d.created_at LIMIT ${limit}) d),
             turns AS (
               SELECT id, run_after, created_at,
                      account_busy + row_number() OVER (
                        PARTITION BY account_id ORDER BY endpoint_turn, run_after, created_at, id) AS turn
                 FROM due),
             -- Locked in turn order, skipping rows another process is claiming; each is checked again once locked.
             chosen AS (
               SELECT d.id FROM webhook_deliveries d JOIN turns t ON t.id = d.id
                WHERE d.state IN ('queued', 'delivering') AND d.run_after <= now()
                  AND (d.claimed_by IS NULL OR d.claim_expires_at < now())
                ORDER BY t.turn, t.run_after, t.created_at, t.id LIMIT ${limit}
                FOR UPDATE OF d SKIP LOCKED),
             claimed AS (
               UPDATE webhook_deliveries d
                  SET state = 'delivering', claimed_by = ${owner}, attempts = d.attempts + 1, updated_at = now(),
                      claim_expires_at = now() + make_interval(secs => ${claimSeconds})
                 FROM chosen WHERE d.id = chosen.id
               RETURNING d.id, d.event_type, d.data, d.created_at, d.attempts, d.endpoint_id)
             SELECT c.*, e.url, e.is_active, e.sealed_secret
               FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id`;
}
