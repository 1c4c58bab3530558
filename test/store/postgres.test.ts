// Runs the store conformance suite on PostgreSQL, in a database made for this run.
import { afterAll, beforeAll } from "bun:test";
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import { createTestDatabase, postgresAvailable, postgresConfig, type TestDatabase } from "../postgres.ts";
import { storeConformance } from "./conformance.ts";

const available = await postgresAvailable();
let database: TestDatabase;

if (available) {
  beforeAll(async () => {
    database = await createTestDatabase("conformance");
  });
  afterAll(() => database?.drop());

  storeConformance("postgres", {
    async open() {
      const store = await openPostgresStore(postgresConfig(database.url));
      await database.truncate();
      return store;
    },
    dispose: (store) => store.close(),
  });
}
