// What a database's migrations say about the svc that made it, alike on both databases: which of this
// binary's migrations it lacks (Drizzle's rule: those newer than the newest it recorded), and whether
// a later svc has migrated it, in which case this one must not touch it (its code would write rows
// the later schema no longer means). svc records beside each migration it applies its name and its
// own version (a table of its own next to Drizzle's), so that an earlier binary can name them.
import { version } from "../../package.json";
import type { EmbeddedMigration } from "./migrations.macro.ts";

/** svc's record of the migrations it applied, beside Drizzle's: created_at is Drizzle's, name and svc_version svc's. */
export const RECORDED_MIGRATIONS = "__svc_migrations";

/** The newest migration a database records. */
export interface LatestMigration {
  /** Drizzle's created_at: the migration's folderMillis. */
  createdAt: number;
  /** Null when nothing recorded them: an svc that kept no record applied it (0.1.1 and before), or something else. */
  name: string | null;
  svcVersion: string | null;
}

/** A later svc migrated the database: this binary refuses to serve from it or change it. */
export class NewerDatabase extends Error {
  override name = "NewerDatabase";
}

/**
 * A database an earlier svc migrated, opened by a command that must not migrate it (every one but serve
 * and migrate): an older svc may be serving it, and would then run on a schema it does not know.
 */
export class BehindDatabase extends Error {
  override name = "BehindDatabase";
}

/**
 * Throws NewerDatabase, naming `database`, when a later svc migrated it: when its newest migration,
 * `latest` (null: none), is one `migrations` does not reach.
 */
export function refuseNewer(
  database: string,
  latest: LatestMigration | null,
  migrations: readonly EmbeddedMigration[],
): void {
  if (latest && isNewer(latest.createdAt, migrations)) throw newerDatabase(database, latest, migrations);
}

/**
 * Why a command that must not migrate cannot use the database: a later svc migrated it (thrown, as
 * refuseNewer does), or it lacks some of `migrations` (returned); null when it is current.
 */
export function behind(
  database: string,
  latest: LatestMigration | null,
  migrations: readonly EmbeddedMigration[],
): BehindDatabase | null {
  refuseNewer(database, latest, migrations);
  if (pendingMigrations(migrations, latest?.createdAt ?? null).length === 0) return null;
  return behindDatabase(database, latest, migrations);
}

/** The refusal of a database behind this binary: one line naming the svc that migrated it and this one. */
function behindDatabase(
  database: string,
  latest: LatestMigration | null,
  migrations: readonly EmbeddedMigration[],
): BehindDatabase {
  const theirs = latest?.svcVersion ? `svc ${latest.svcVersion}` : "an earlier svc";
  // An svc that kept no record (0.1.1 and before) applied migrations this binary carries: named from them.
  const known = latest && migrations.find((m) => m.folderMillis === latest.createdAt)?.name;
  const migration = latest
    ? (latest.name ?? known ?? `a migration of ${new Date(latest.createdAt).toISOString()}`)
    : "none";
  return new BehindDatabase(
    `${database} is at ${theirs}'s schema (up to ${migration}), behind svc ${version} (up to ${migrations.at(-1)!.name}): run \`svc migrate\` with this svc first (or start it), after stopping any older svc serving it`,
  );
}

/**
 * A step of bringing a database up to this binary, told as it is done: the snapshot kept first (SQLite),
 * each migration applied, then (SQLite) the way back to the svc before, and each earlier upgrade's
 * snapshot deleted beyond the newest two.
 */
export type UpgradeStep =
  | { snapshot: string }
  | { applied: string }
  | { wayBack: { database: string; snapshot: string; previous: string | null } }
  | { pruned: string };

/** The migrations a database whose newest is `latestCreatedAt` (null: none) has yet to apply, oldest first. */
export function pendingMigrations<M extends { folderMillis: number }>(
  migrations: readonly M[],
  latestCreatedAt: number | null,
): M[] {
  return migrations.filter((m) => latestCreatedAt === null || latestCreatedAt < m.folderMillis);
}

/** Whether a database whose newest migration is `latestCreatedAt` holds one this binary does not know. */
function isNewer(latestCreatedAt: number, migrations: readonly EmbeddedMigration[]): boolean {
  return latestCreatedAt > migrations.at(-1)!.folderMillis;
}

/** The refusal: one line naming the database, the svc that migrated it and its migration, and this svc. */
function newerDatabase(
  database: string,
  latest: LatestMigration,
  migrations: readonly EmbeddedMigration[],
): NewerDatabase {
  const theirs = latest.svcVersion ? `svc ${latest.svcVersion}` : "a later svc";
  const migration = latest.name ?? `a migration of ${new Date(latest.createdAt).toISOString()}`;
  return new NewerDatabase(
    `${database} was migrated by ${theirs} (to ${migration}), which svc ${version} (up to ${migrations.at(-1)!.name}) does not know: run ${latest.svcVersion ? theirs : "that svc"} or later, or go back to the copy kept before that upgrade (docs/operations.md, "Upgrading and going back")`,
  );
}

/** A step as a command prints it. */
export function upgradeNotice(step: UpgradeStep): string {
  if ("snapshot" in step) return `kept the database as it was in ${step.snapshot}`;
  if ("applied" in step) return `applied migration ${step.applied}`;
  if ("pruned" in step) return `deleted ${step.pruned}, an earlier upgrade's snapshot (the newest two are kept)`;
  const { database, snapshot, previous } = step.wayBack;
  const earlier = previous ? `svc ${previous}` : "the earlier svc";
  // The old binary on the migrated file is what must never happen: 0.1.1 and before would serve it.
  return `to go back to ${earlier}: stop svc; copy ${snapshot} over ${database} and delete ${database}-wal and ${database}-shm; then start ${earlier} (never on ${database} as it is now: it is migrated)`;
}

/** A step as `svc serve` logs it: the line's fields and its message. */
export function upgradeLogLine(step: UpgradeStep): { fields: Record<string, unknown>; msg: string } {
  if ("snapshot" in step) return { fields: { snapshot: step.snapshot }, msg: "kept the database as it was" };
  if ("applied" in step) return { fields: { migration: step.applied, version }, msg: "applied migration" };
  if ("pruned" in step) return { fields: { pruned: step.pruned }, msg: upgradeNotice(step) };
  const { snapshot, previous } = step.wayBack;
  return { fields: { snapshot, previous }, msg: upgradeNotice(step) };
}
