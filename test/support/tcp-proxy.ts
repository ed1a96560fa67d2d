import { connect, createServer, type Server, type Socket } from 'node:net';

/** Where a PostgreSQL URL leads: a Unix socket (`?host=/dir&port=N`, as the embedded server's URLs) or TCP. */
function targetOf(url: URL): { path: string } | { host: string; port: number } {
  const socketDir = url.searchParams.get('host');
  const port = Number(url.searchParams.get('port') ?? url.port) || 5432;
  if (socketDir?.startsWith('/')) return { path: `${socketDir}/.s.PGSQL.${port}` };
  return { host: url.hostname || '127.0.0.1', port };
}

export interface TcpProxy {
  /** The same database as the URL given, reached through the proxy on 127.0.0.1. */
  url: string;
  /** Refuses new connections and cuts every open one, as a database server that went away. */
  stop(): Promise<void>;
  /** Refuses new connections and leaves the open ones be: what is connected keeps working, nothing can reconnect. */
  refuseNew(): Promise<void>;
  /** Accepts connections again, on the same port. */
  resume(): Promise<void>;
  /**
   * The open connections go silent both ways without closing, as a peer whose network vanished (no FIN, no
   * RST); new connections work.
   */
  silenceOpen(): void;
}

/** A TCP proxy in front of a PostgreSQL server, so a test can take the database away from a gateway and give it back. */
export async function startTcpProxy(databaseUrl: string): Promise<TcpProxy> {
  // A socket URL has no host (`postgresql://user@/db?host=/dir`), which URL refuses: one is put in to parse it.
  const original = new URL(databaseUrl.replace(/^(postgres(?:ql)?:\/\/(?:[^/?@]*@)?)\//, '$1localhost/'));
  const target = targetOf(original);
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target);
    track(client);
    track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.once('close', () => pairs.delete(pair));
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const url = new URL(`postgresql://127.0.0.1:${port}${original.pathname}`);
  url.username = original.username;
  url.password = original.password;
  return {
    url: url.toString(),
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    refuseNew: async () => {
      // Not waiting for 'close': it comes only once the open connections, which stay, have ended.
      server.close();
    },
    resume: async () => {
      await listen(port);
    },
    silenceOpen: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
  };
}
