// Runs the store conformance suite on PostgreSQL, in a database made for this run: one store for the
// file, emptied before each test (opening and migrating one per test took most of the suite's time).
import { afterAll, beforeAll } from "bun:test";
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { createTestDatabase, postgresAvailable, postgresConfig, type TestDatabase } from "../postgres.ts";
import { storeConformance } from "./conformance.ts";

const available = await postgresAvailable();
let database: TestDatabase;
let store: VersionedStore;

if (available) {
  beforeAll(async () => {
    database = await createTestDatabase("conformance");
    store = await openPostgresStore(postgresConfig(database.url));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  storeConformance("postgres", {
    async open() {
      await database.truncate();
      // Emptied by another connection, as another instance would: heard of before the test reads.
      await store.settled?.();
      return store;
    },
    dispose: async () => {},
  });
}
