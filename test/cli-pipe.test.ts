// A command whose reader goes away early (`svc user list | head -1`) ends as if it had been read to the end:
// no stack trace, exit 0. Run as a real process: only a real pipe closes under a writer.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAIN, runProcessSync, SOURCE_SVC } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-pipe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: `sqlite:${join(dir, "svc.db")}` };

test("svc user list | head -1: the first line, exit 0, nothing on stderr but which database", async () => {
  expect(runProcessSync([...SOURCE_SVC, "migrate"], { env }).code).toBe(0);
  // More rows than a pipe holds (64 KiB), so that writes go on after head has gone.
  const db = new Database(join(dir, "svc.db"));
  const insert = db.prepare(
    "INSERT INTO users (id, username, username_key, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, 'x', ?, ?)",
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < 5000; i++)
      insert.run(crypto.randomUUID(), `user${i}`, `user${i}`, `u${i}@example.com`, now, now);
  })();
  db.close();
  const shell = runProcessSync(
    ["bash", "-c", `"${process.execPath}" "${MAIN}" user list | head -1; exit \${PIPESTATUS[0]}`],
    {
      env,
    },
  );
  expect(shell.stdout).toStartWith("id\tusername");
  expect({ exitCode: shell.code, stderr: shell.stderr.trim() }).toEqual({
    exitCode: 0,
    stderr: `svc user: using sqlite:${join(dir, "svc.db")}`,
  });
});
