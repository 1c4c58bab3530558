// A request's peer address, read once for each request however often it is asked for (health's details
// and the access line both ask): a kept answer must never be another request's.
import { afterAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { connect } from "node:net";
import { peerAddress } from "../src/http/peer-address.ts";

test("one requestIP a request, however often asked; another request is asked anew", () => {
  let calls = 0;
  const server = {
    requestIP: (request: Request) => {
      calls++;
      return { address: new URL(request.url).hostname, family: "IPv4", port: 1 };
    },
  } as unknown as Server<unknown>;
  const first = new Request("http://10.0.0.1/");
  const second = new Request("http://10.0.0.2/");
  expect([peerAddress({ server, received: first }), peerAddress({ server, received: first })]).toEqual([
    "10.0.0.1",
    "10.0.0.1",
  ]);
  expect(calls).toBe(1);
  expect(peerAddress({ server, received: second })).toBe("10.0.0.2");
  expect(peerAddress({ server, received: first })).toBe("10.0.0.1");
  expect(calls).toBe(3);
  // In process there is no socket, and nothing to ask.
  expect(peerAddress({ server: undefined, received: first })).toBeUndefined();
});

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request, server) =>
    new Response(`${peerAddress({ server, received: request })} ${peerAddress({ server, received: request })}`),
});
afterAll(() => server.stop(true));

/** One GET over a fresh socket from `localAddress`; the answer's body. */
function getFrom(localAddress: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: server.port!, localAddress }, () =>
      socket.write("GET / HTTP/1.1\r\nHost: svc\r\nConnection: close\r\n\r\n"),
    );
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("end", () => resolve(text.slice(text.indexOf("\r\n\r\n") + 4)));
    socket.on("error", reject);
  });
}

test("over sockets, each request is told its own peer, interleaved as they come", async () => {
  const peers = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.1"];
  const answers = await Promise.all(peers.map(getFrom));
  expect(answers).toEqual(peers.map((peer) => `${peer} ${peer}`));
  for (const peer of peers) expect(await getFrom(peer)).toBe(`${peer} ${peer}`);
});
