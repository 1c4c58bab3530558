// The floor: a bare Bun.serve answering each benchmarked request with svc's very response bytes
// (captured from svc beforehand). For login it first does one Bun.password.verify against one of
// svc's stored hashes; for refresh one insert into a SQLite file set up as svc's (WAL, full sync);
// for sign-up one Bun.password.hash: the work svc cannot avoid.
// Usage: bun bench/floor.ts <responses.json>   (prints "listening <port>")

import { Database } from "bun:sqlite";
import { dirname, join } from "node:path";

interface Captured {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** "verify": verify `password` against `hash` first; "hash": hash `password` first; "write": one SQLite insert. */
  work?: "verify" | "hash" | "write";
  password?: string;
  hash?: string;
}

const captured: Record<string, Captured> = await Bun.file(process.argv[2]!).json();
const argon2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;

// Next to the responses file: the bench's work folder, removed when the bench ends.
const db = new Database(join(dirname(process.argv[2]!), `floor-${process.pid}.db`));
db.run("PRAGMA journal_mode = WAL");
db.run("PRAGMA synchronous = FULL");
db.run("CREATE TABLE writes (id INTEGER PRIMARY KEY, at TEXT NOT NULL)");
const insert = db.prepare("INSERT INTO writes (at) VALUES (?)");

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    // A revalidating request has its own answer (a 304), keyed by the tag it sends.
    const tag = request.headers.get("if-none-match");
    const answer = captured[`${request.method} ${url.pathname}${tag ? ` ${tag}` : ""}`];
    if (!answer) return new Response("not captured", { status: 404 });
    await request.arrayBuffer();
    if (answer.work === "verify") await Bun.password.verify(answer.password!, answer.hash!);
    if (answer.work === "hash") await Bun.password.hash(answer.password!, argon2);
    if (answer.work === "write") insert.run(new Date().toISOString());
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  },
});
console.log(`listening ${server.port}`);
