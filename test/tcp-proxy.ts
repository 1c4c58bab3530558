// A TCP proxy in front of a local server that a test can take down, to stage a database outage.
import type { Socket, TCPSocketListener } from "bun";

export type ProxyMode = "up" | "down" | "silent";

interface Link {
  upstream?: Socket<Link>;
  client?: Socket<Link>;
  pending: Uint8Array[];
}

export interface TcpProxy {
  port: number;
  /** up: forwards; down: closes every connection and refuses new ones; silent: accepts and never answers. */
  set(mode: ProxyMode): void;
  stop(): void;
}

export function startTcpProxy(targetPort: number): TcpProxy {
  let mode: ProxyMode = "up";
  const clients = new Set<Socket<Link>>();

  const server: TCPSocketListener<Link> = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { pending: [] };
        if (mode === "down") return void client.end();
        clients.add(client);
        if (mode === "silent") return;
        client.data.upstream = await Bun.connect<Link>({
          hostname: "127.0.0.1",
          port: targetPort,
          data: { client, pending: [] },
          socket: {
            data: (_, chunk) => void client.write(chunk),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
        for (const chunk of client.data.pending) client.data.upstream.write(chunk);
        client.data.pending = [];
      },
      data(client, chunk) {
        if (mode === "silent") return;
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        clients.delete(client);
        client.data.upstream?.end();
      },
      error(client) {
        client.data.upstream?.end();
      },
    },
  });

  return {
    port: server.port,
    set(next) {
      mode = next;
      if (next === "up") return;
      for (const client of clients) {
        if (next === "down") {
          client.data.upstream?.end();
          client.end();
        } else {
          // silent: sever the upstream but leave the client hanging, like a network partition.
          client.data.upstream?.end();
          client.data.upstream = undefined;
        }
      }
    },
    stop() {
      for (const client of clients) client.end();
      server.stop(true);
    },
  };
}
