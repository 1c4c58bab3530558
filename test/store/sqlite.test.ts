// Runs the store conformance suite on bun:sqlite, in memory and on a file.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { storeConformance } from "./conformance.ts";

storeConformance("sqlite in memory", {
  open: async () => openSqliteStore(":memory:"),
  dispose: (store) => store.close(),
});

const dir = mkdtempSync(join(tmpdir(), "svc-store-"));
let n = 0;
storeConformance("sqlite file", {
  open: async () => openSqliteStore(join(dir, `db-${++n}`, "svc.db")),
  dispose: (store) => store.close(),
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
