// svc's tables, declared once for every database: each database's kit makes them with its own builders
// (sqlite/kit.ts, postgres/kit.ts), and its schema.ts exports them for drizzle-kit and the store.
import { accountTables } from "./accounts.ts";
import { bookkeepingTables } from "./bookkeeping.ts";
import { categoryTables } from "./categories.ts";
import type { DeclaredTable, Kit } from "./kit.ts";
import { secondFactorTables } from "./second-factors.ts";

export function declareTables(c: Kit) {
  const accounts = accountTables(c);
  return {
    ...accounts,
    ...bookkeepingTables(c),
    ...categoryTables(c, accounts),
    ...secondFactorTables(c, accounts),
  } satisfies Record<string, DeclaredTable>;
}

export type DeclaredTables = ReturnType<typeof declareTables>;
