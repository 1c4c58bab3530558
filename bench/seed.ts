// The bench's data: users and categories loaded straight into a database, as bench/run.ts and
// bench/footprint.ts serve them. Every user's password is PASSWORD, hashed as svc hashes by default.
import { parseConfig } from "../src/config/index.ts";
import { openStore } from "../src/db/open.ts";
import type { CategoryRecord, UserRecord } from "../src/db/store.ts";

export const PASSWORD = "bench password 1";

/** Loads `users` users (user0, user1, ...) and `categories` categories into the database at `databaseUrl`, replacing what it held. */
export async function seed(databaseUrl: string, users: number, categories: number): Promise<UserRecord[]> {
  const store = await openStore(parseConfig({ SVC_DATABASE_URL: databaseUrl }).database);
  const passwordHash = await Bun.password.hash(PASSWORD, { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 });
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  const records: UserRecord[] = [];
  for (let i = 0; i < users; i++) {
    const at = new Date(start + i).toISOString();
    records.push({
      id: Bun.randomUUIDv7(),
      username: `user${i}`,
      email: `user${i}@example.com`,
      passwordHash,
      tokenVersion: 0,
      createdAt: at,
      updatedAt: at,
      role: "user",
      status: "active",
      lastLoginAt: null,
      emailVerifiedAt: null,
    });
  }
  const owner = records[0]!.id;
  const cats: CategoryRecord[] = Array.from({ length: categories }, (_, i) => {
    const at = new Date(start + i).toISOString();
    return {
      id: Bun.randomUUIDv7(),
      name: `Category ${String(i).padStart(5, "0")}`,
      description: `The description of category ${i}`,
      colorHex: "#64748B",
      icon: "tag",
      createdBy: owner,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
  });
  async function* batches() {
    for (let i = 0; i < records.length; i += 5000) yield records.slice(i, i + 5000);
  }
  await store.load({ users: batches(), categories: cats }, { replace: true, expect: { users, categories } });
  await store.close();
  return records;
}
