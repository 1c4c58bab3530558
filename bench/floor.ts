// The floor: a bare Bun.serve answering each benchmarked request with svc's very response bytes
// (captured from svc beforehand). For login it first does one Bun.password.verify against one of
// svc's stored hashes; for sign-up one Bun.password.hash: the work svc cannot avoid.
// Usage: bun bench/floor.ts <responses.json>   (prints "listening <port>")

interface Captured {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** "verify": verify `password` against `hash` first; "hash": hash `password` first. */
  work?: "verify" | "hash";
  password?: string;
  hash?: string;
}

const captured: Record<string, Captured> = await Bun.file(process.argv[2]!).json();
const argon2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const answer = captured[`${request.method} ${url.pathname}`];
    if (!answer) return new Response("not captured", { status: 404 });
    await request.arrayBuffer();
    if (answer.work === "verify") await Bun.password.verify(answer.password!, answer.hash!);
    if (answer.work === "hash") await Bun.password.hash(answer.password!, argon2);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  },
});
console.log(`listening ${server.port}`);
