import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";

/** A running proxy; close it with `close()` or `await using`. */
export interface ConnectProxy extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`, for `HTTPS_PROXY`. */
  readonly url: string;
  /** Every `host:port` a client asked to reach, in order. */
  readonly targets: readonly string[];
  close(): Promise<void>;
}

/**
 * An HTTP CONNECT proxy on 127.0.0.1 that tunnels every `NAME:443` to `127.0.0.1:port` (or to
 * the port `routes` gives NAME): with `HTTPS_PROXY` it lets Terraform reach the fixture under
 * hostnames without a port (which `TF_TOKEN_` variables need) and without touching /etc/hosts
 * or DNS. Anything else is refused.
 */
export async function startConnectProxy(
  port: number,
  routes: Readonly<Record<string, number>> = {},
): Promise<ConnectProxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_request, response) => {
    response.writeHead(405).end();
  });
  server.on("connect", (request, client: Socket, head: Buffer) => {
    const target = request.url ?? "";
    targets.push(target);
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    if (!target.endsWith(":443")) {
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const upstream = connect(routes[target.slice(0, -":443".length)] ?? port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: proxyPort } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
    return closing;
  };
  return { url: `http://127.0.0.1:${proxyPort}`, targets, close, [Symbol.asyncDispose]: close };
}
