// The footprint floor: a bare Bun.serve compiled as svc is (`bun build --compile --minify --bytecode`),
// answering GET /svc/health with a health body of svc's shape. `bun run bench` builds it next to svc's
// binary and measures both the same way: file size, exec to the first 200, RSS at start and after load.
const body = JSON.stringify({ service: "svc", version: "0.0.0", environment: "production", status: "ok" });
const server = Bun.serve({
  hostname: process.env.SVC_HOST ?? "127.0.0.1",
  port: Number(process.env.SVC_PORT ?? 0),
  routes: {
    "/svc/health": () => new Response(body, { headers: { "content-type": "application/json" } }),
  },
  fetch: () => new Response("not found", { status: 404 }),
});
console.log(JSON.stringify({ msg: "svc listening", address: `http://${server.hostname}:${server.port}` }));
