// Two instances of svc on one PostgreSQL database, each with its own pool, as behind a load balancer
// (test/instances*.test.ts): a database of the file's own, three pools opened together, apps on the first two.
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { createTestDatabase, postgresConfig, type TestDatabase } from "../postgres.ts";

export interface Instances {
  database: TestDatabase;
  stores: VersionedStore[];
  a: Awaited<ReturnType<typeof testApp>>;
  b: Awaited<ReturnType<typeof testApp>>;
  /**
   * Once the instance has heard every change committed so far: each keeps token standings and table
   * versions in memory and hears of another's change within SVC_DB_STALENESS, not at once.
   */
  heard(instance: 0 | 1): Promise<void>;
}

export async function openInstances(name: string): Promise<Instances> {
  const database = await createTestDatabase(name);
  // Started together, as a deployment does: the advisory lock lets exactly one of them migrate.
  const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(postgresConfig(database.url))));
  const [a, b] = [await testApp({ on: stores[0] }), await testApp({ on: stores[1] })];
  return { database, stores, a, b, heard: (instance) => stores[instance]!.settled!() };
}

export async function closeInstances(instances: Partial<Instances>): Promise<void> {
  for (const store of instances.stores ?? []) await store.close();
  await instances.database?.drop();
}
