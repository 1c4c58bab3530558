// `svc backup --list`, `svc backup --now` and `svc restore`: the snapshots at SVC_BACKUP_TO seen, taken and
// brought back from the box's shell. (`svc backup <file>`, one plain snapshot, is src/process/cli.ts's own.)
import { mkdtemp, rm } from "node:fs/promises";
import { parseArgs } from "node:util";
import { version } from "../../package.json";
import { type Config, ConfigError } from "../config/index.ts";
import { describeDatabase } from "../db/describe.ts";
import { UsageError } from "../errors/index.ts";
import { missingSqlite } from "../db/sqlite/file.ts";
import { type Destination, placeOf } from "./destination.ts";
import { openDestination } from "./open-destination.ts";
import { failureReason } from "./failure.ts";
import { databaseIdentity } from "./identity.ts";
import { snapshotName } from "./names.ts";
import { RestoreRefused, restoreSnapshot } from "./restore.ts";
import { scratchPrefix, takeSnapshot } from "./snapshot.ts";
import { storeSnapshot } from "./store.ts";
import type { SnapshotCounts } from "./verify.ts";

/** `svc backup --list` or `svc backup --now`. */
/** The streams a command writes to: cli.ts's Io, not imported from there, which imports this file. */
interface Io {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
}

export async function backupCommand(args: string[], config: Config, io: Io): Promise<number> {
  const [flag, ...rest] = args;
  if ((flag !== "--list" && flag !== "--now") || rest.length > 0)
    throw new UsageError("give one file to write, --list or --now");
  const destination = await configuredDestination(config, flag);
  if (flag === "--now") return backUpNow(config, destination, io);
  try {
    return await list(destination, io);
  } catch (error) {
    io.err.write(`svc backup: ${failureReason(error, config.backup.s3)}\n`);
    return 1;
  }
}

async function configuredDestination(config: Config, flag: string): Promise<Destination> {
  const { to, s3 } = config.backup;
  if (!to)
    throw new ConfigError("SVC_BACKUP_TO", `required for svc backup ${flag}: a folder, or s3://bucket/prefix`, "");
  return openDestination(to, s3);
}

async function list(destination: Destination, io: Io): Promise<number> {
  const snapshots = await destination.list();
  if (snapshots.length === 0) {
    io.err.write(`svc backup: no snapshots at ${destination.shown}\n`);
    return 0;
  }
  io.out.write(`${["name", "bytes", "taken", "version", "database"].join("\t")}\n`);
  for (const s of snapshots) io.out.write(`${[s.name, s.size, s.takenAt, s.version, s.database ?? "-"].join("\t")}\n`);
  return 0;
}

/** One snapshot taken, checked, stored and the oldest pruned, here and now: no retries, the operator is here. */
async function backUpNow(config: Config, destination: Destination, io: Io): Promise<number> {
  const { database, backup } = config;
  if (database.kind !== "sqlite") throw new ConfigError("SVC_DATABASE_URL", "SQLite for svc backup --now", "postgres");
  const missing = missingSqlite(database.path);
  if (missing) {
    io.err.write(`svc backup: ${missing}\n`);
    return 1;
  }
  const scratch = await mkdtemp(scratchPrefix(database.path));
  try {
    const identity = databaseIdentity(database.path);
    const at = new Date();
    const name = snapshotName(at, version, identity);
    const taken = await takeSnapshot({ databasePath: database.path, scratch, name });
    const { pruned, pruneError } = await storeSnapshot(destination, taken, backup.keep, identity, at.getTime());
    const what = `${taken.size} bytes: ${holding(taken.counts)}`;
    const gone = pruned.length > 0 ? `; deleted the ${pruned.length} oldest beyond SVC_BACKUP_KEEP=${backup.keep}` : "";
    io.out.write(
      `backed up ${describeDatabase(database)} to ${placeOf(destination.shown, taken.name)} (${what})${gone}\n`,
    );
    if (!pruneError) return 0;
    io.err.write(
      `svc backup: could not delete the oldest beyond SVC_BACKUP_KEEP: ${failureReason(pruneError, backup.s3)}\n`,
    );
    return 1;
  } catch (error) {
    io.err.write(`svc backup: ${failureReason(error, backup.s3)}\n`);
    return 1;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** `svc restore --from <file | folder/latest | s3://bucket/prefix/name | s3://bucket/prefix/latest> [--force]`. */
export async function restoreCommand(args: string[], config: Config, io: Io): Promise<number> {
  let from: string, force: boolean;
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { from: { type: "string" }, force: { type: "boolean", default: false } },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) throw new Error(`unexpected ${positionals.join(" ")}`);
    if (!values.from) throw new Error("--from is required");
    [from, force] = [values.from, values.force ?? false];
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { database } = config;
  if (database.kind !== "sqlite") {
    io.err.write("svc restore: the database is PostgreSQL; restore it with pg_restore (docs/backups.md)\n");
    return 1;
  }
  if (database.path === ":memory:") {
    io.err.write("svc restore: an in-memory database cannot be restored into: name a file in SVC_DATABASE_URL\n");
    return 1;
  }
  try {
    const restored = await restoreSnapshot({ databasePath: database.path, from, force, s3: config.backup.s3 });
    const taken = restored.takenAt
      ? `taken ${restored.takenAt} by svc ${restored.version}`
      : "of an unknown time and svc (not named as svc names its snapshots)";
    const lines = [
      `restored ${describeDatabase(database)} from ${restored.from}`,
      `  snapshot ${taken}`,
      `  ${holding(restored.counts)}`,
      ...(restored.keptAs ? [`  the database that was there is kept as ${restored.keptAs}`] : []),
      ...restored.leftovers.map((file) => `  a log left by a database that is gone is kept as ${file}`),
      "  start svc to serve it (it applies any migration this svc has that the snapshot lacks)",
    ];
    io.out.write(`${lines.join("\n")}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof RestoreRefused)) throw error;
    io.err.write(`svc restore: ${error.message}; nothing was changed\n`);
    return 1;
  }
}

function holding(counts: SnapshotCounts): string {
  return `${counts.users} users, ${counts.categories} categories, ${counts.sessions} sessions, ${counts.auditEvents} audit events`;
}
