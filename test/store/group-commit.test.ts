// SQLite's group commit (src/db/sqlite/group-commit.ts): transactions asked for together share one COMMIT,
// yet each lands or fails alone, and none is answered before it is committed.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditEvent } from "../../src/audit/model.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { newCategory, newUser } from "./conformance/fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-group-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = () => {
  const path = join(dir, `db-${++n}.db`);
  return { path, store: openSqliteStore(path) };
};
const created = () => auditEvent("user.created", { origin: { address: "192.0.2.1", requestId: "r" } });

/** The frames in the database's WAL: what its commits have written since the log last restarted. */
async function walFrames(path: string): Promise<number> {
  // The WAL index header (https://www.sqlite.org/walformat.html): mxFrame at byte 16, in the host's order.
  return new DataView(await Bun.file(`${path}-shm`).arrayBuffer()).getUint32(16, true);
}

test("transactions asked for together commit once: their pages are written once, not once each", async () => {
  const apart = open();
  const together = open();
  try {
    const startApart = await walFrames(apart.path);
    for (let i = 0; i < 20; i++) await apart.store.users.create(newUser(`apart${i}`), created());
    const startTogether = await walFrames(together.path);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => together.store.users.create(newUser(`together${i}`), created())),
    );
    const framesApart = (await walFrames(apart.path)) - startApart;
    const framesTogether = (await walFrames(together.path)) - startTogether;
    expect((await together.store.counts()).users).toBe(20);
    // Apart, every commit writes the table's, its indexes' and the audit log's pages again.
    expect(framesTogether * 4).toBeLessThan(framesApart);
  } finally {
    await apart.store.close();
    await together.store.close();
  }
});

test("single writes asked for together commit once too", async () => {
  const apart = open();
  const together = open();
  try {
    const startApart = await walFrames(apart.path);
    for (let i = 0; i < 20; i++) await apart.store.categories.create(newCategory(`apart ${i}`));
    const startTogether = await walFrames(together.path);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => together.store.categories.create(newCategory(`together ${i}`))),
    );
    const framesApart = (await walFrames(apart.path)) - startApart;
    const framesTogether = (await walFrames(together.path)) - startTogether;
    expect((await together.store.categories.list()).length).toBe(20);
    expect(framesTogether * 4).toBeLessThan(framesApart);
  } finally {
    await apart.store.close();
    await together.store.close();
  }
});

test("one transaction of a group that fails is undone alone: the others land, and it says why", async () => {
  const { store } = open();
  try {
    await store.users.create(newUser("taken"), created());
    const before = await store.audit.list({ limit: 100 });
    const outcomes = await Promise.allSettled(
      ["ann", "bob", "taken", "cy", "ann"].map((name) => store.users.create(newUser(name), created())),
    );
    const codes = outcomes.map((o) => (o.status === "fulfilled" ? "ok" : (o.reason as { code?: string }).code));
    expect(codes).toEqual(["ok", "ok", "email_taken", "ok", "email_taken"]);
    const names = (await store.users.list({ limit: 100 })).map((u) => u.username).sort();
    expect(names).toEqual(["ann", "bob", "cy", "taken"]);
    // The refused ones' audit events went with them.
    expect(await store.audit.list({ limit: 100 })).toHaveLength(before.length + 3);
  } finally {
    await store.close();
  }
});

test("a transaction is answered only once its group has committed: a new connection sees what it wrote", async () => {
  const { path, store } = open();
  try {
    const users = await Promise.all(
      Array.from({ length: 5 }, (_, i) => store.users.create(newUser(`seen${i}`), created())),
    );
    const other = openSqliteStore(path);
    try {
      for (const user of users) expect((await other.users.findById(user.id))?.username).toBe(user.username);
    } finally {
      await other.close();
    }
  } finally {
    await store.close();
  }
});

test("a transaction asked for just before the store closes lands before the connection goes", async () => {
  const { path, store } = open();
  const asked = store.users.create(newUser("late"), created());
  await store.close();
  expect((await asked).username).toBe("late");
  const again = openSqliteStore(path);
  try {
    expect((await again.users.findByLogin("late"))?.username).toBe("late");
  } finally {
    await again.close();
  }
});
