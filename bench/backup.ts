// `bun bench/backup.ts [users…]`: what one scheduled backup costs (src/backup/snapshot.ts): a database of N
// users, each with a session and two audit events, snapshotted (VACUUM INTO), checked, gzipped; the time of
// each step, the sizes, and the longest the main thread went unanswered while the worker did it all (what
// requests would wait), against doing it on the main thread. Figures go in bench/results.md.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { snapshotInWorker } from "../src/backup/in-worker.ts";
import { gzipFile } from "../src/backup/compress.ts";
import { verifySnapshot } from "../src/backup/verify.ts";
import { backupSqlite } from "../src/db/sqlite/backup.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";

const sizes = process.argv.slice(2).map(Number);

async function database(dir: string, users: number): Promise<string> {
  const path = join(dir, "svc.db");
  await (await openSqliteStore(path)).close();
  const db = new Database(path);
  db.run("PRAGMA journal_mode = WAL");
  const now = new Date().toISOString();
  const hash = `$argon2id$v=19$m=19456,t=2,p=1$${"s".repeat(22)}$${"h".repeat(43)}`;
  const user = db.prepare(
    "INSERT INTO users (id, username, username_key, email, password_hash, created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
  );
  const session = db.prepare(
    "INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at, user_agent, client_address) VALUES (?,?,?,?,?,?,?)",
  );
  const event = db.prepare(
    "INSERT INTO audit_events (id, at, action, actor_id, target_id, client_address, request_id, outcome) VALUES (?,?,?,?,?,?,?,?)",
  );
  db.transaction(() => {
    for (let i = 0; i < users; i++) {
      const id = Bun.randomUUIDv7();
      user.run(id, `user${i}`, `user${i}`, `user${i}@example.com`, hash, now, now);
      session.run(
        Bun.randomUUIDv7(),
        id,
        now,
        now,
        now,
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0",
        "203.0.113.7",
      );
      event.run(Bun.randomUUIDv7(), now, "user.created", null, id, "203.0.113.7", Bun.randomUUIDv7(), "success");
      event.run(Bun.randomUUIDv7(), now, "login.succeeded", id, id, "203.0.113.7", Bun.randomUUIDv7(), "success");
    }
  })();
  db.close();
  return path;
}

/** The longest gap between 5 ms ticks of the main thread while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  await work();
  clearInterval(timer);
  return Math.max(longest, performance.now() - last);
}

for (const users of sizes.length > 0 ? sizes : [10_000]) {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-backup-"));
  try {
    const path = await database(dir, users);
    const raw = join(dir, "step.db");
    let at = performance.now();
    backupSqlite(path, raw);
    const vacuum = performance.now() - at;
    at = performance.now();
    const { counts } = verifySnapshot(raw);
    const verify = performance.now() - at;
    at = performance.now();
    await gzipFile(raw, `${raw}.gz`);
    const gzip = performance.now() - at;
    const inWorker = await longestStall(
      () => snapshotInWorker({ databasePath: path, scratch: mkdtempSync(join(dir, "w-")), name: "w.db.gz" }).done,
    );
    const onMain = await longestStall(async () => {
      backupSqlite(path, join(dir, "main.db"));
      verifySnapshot(join(dir, "main.db"));
      await gzipFile(join(dir, "main.db"), join(dir, "main.db.gz"));
    });
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    console.log(
      `${users} users (${counts?.sessions} sessions, ${counts?.auditEvents} audit events): database ${mb(Bun.file(path).size)} MB, snapshot ${mb(Bun.file(raw).size)} MB, gzipped ${mb(Bun.file(`${raw}.gz`).size)} MB; VACUUM INTO ${vacuum.toFixed(0)} ms, check ${verify.toFixed(0)} ms, gzip ${gzip.toFixed(0)} ms; main thread stalled at most ${inWorker.toFixed(0)} ms with the worker, ${onMain.toFixed(0)} ms without`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
