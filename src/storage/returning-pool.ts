import pg from 'pg';

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: Error | boolean) => void,
) => void;

/**
 * pg's pool, whose clients taken by `connect()` always come back: each is given back once (a second give-back
 * does nothing, where pg-pool would throw), and at once, to be dropped, when its connection fails while it is
 * out. drizzle sends a transaction's BEGIN before the `try` whose `finally` gives its client back, so a client
 * whose connection the server cut just before BEGIN (a restart, a failover, a terminated backend the pool had
 * not heard of yet) was never given back: the pool ran short of clients, and closing it waited forever.
 */
export class ReturningPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    // The callback form is pg's own (its `query` gives back what it takes): only drizzle's form is guarded.
    if (callback) {
      super.connect(callback);
      return undefined;
    }
    return super.connect().then(returnedOnce);
  }
}

function returnedOnce(client: pg.PoolClient): pg.PoolClient {
  const release = client.release;
  let out = true;
  const giveBack = (error?: Error | boolean) => {
    if (!out) return;
    out = false;
    client.off('error', cut);
    release(error);
  };
  const cut = (error: Error) => giveBack(error);
  client.on('error', cut);
  client.release = giveBack;
  return client;
}
