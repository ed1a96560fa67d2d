import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what a server wrote on a socket into status, headers (lower-cased names) and body. */
export function parseRawAnswer(text: string): RawAnswer {
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    statusLine,
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: split === -1 ? '' : text.slice(split + 4),
  };
}

/** Opens a TCP connection to a `http://host:port` address. */
export function openSocket(address: string): Promise<Socket> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server writes until it closes the connection. */
export function readUntilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Sends raw bytes as one request and reads the answer up to the server's close. */
export async function rawExchange(address: string, request: string): Promise<RawAnswer> {
  const socket = await openSocket(address);
  const closed = readUntilClosed(socket);
  socket.write(request);
  return parseRawAnswer(await closed);
}
