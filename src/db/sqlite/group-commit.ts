// Group commit: the timed transactions asked for within one turn of the event loop, or while the previous
// group runs, commit together: one COMMIT, and so one wait for the disk, for all of them. Each runs inside
// a savepoint of its own, so each still lands or is undone alone, and none is answered before the COMMIT
// that makes it durable. With synchronous = FULL every COMMIT waits for the WAL to reach the disk, and
// under load a refresh spent half of its CPU in its own (bench/results.md, "#59: group commit").
//
// A group runs its transactions one after another on the one connection, in the order they were asked
// for: each sees what those before it wrote, as it would had they committed first, so the answers are
// those of some serial order. What SQLite undoes as a whole (a full disk, an I/O error, a lock another
// process held past busy_timeout) fails every transaction of the group, as it would have failed each.
import type { Database, Statement } from "bun:sqlite";

interface Asked {
  work: () => Promise<unknown>;
  /** The error to answer for a failure of this transaction (SQLite's, read into the contract's). */
  fail: (error: unknown) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommit {
  /** Runs `work` in a transaction of the next group; settles once that group has committed or failed. */
  transaction<T>(work: () => Promise<T>, fail: (error: unknown) => unknown): Promise<T>;
}

/**
 * `prepare` keeps its statements until the connection closes (statements.ts); `exclusive` holds the
 * connection for a group: no other operation's statements run inside its transaction.
 */
export function groupCommit(
  client: Database,
  prepare: (sql: string) => Statement,
  exclusive: <T>(work: () => Promise<T>) => Promise<T>,
): GroupCommit {
  const s: Statements = {
    // IMMEDIATE takes the write lock at once: another process's writes wait (busy_timeout).
    begin: prepare("BEGIN IMMEDIATE"),
    commit: prepare("COMMIT"),
    rollback: prepare("ROLLBACK"),
    savepoint: prepare("SAVEPOINT grouped"),
    release: prepare("RELEASE grouped"),
    undo: prepare("ROLLBACK TO grouped"),
  };

  let waiting: Asked[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const group = waiting;
    waiting = [];
    // Never rejects: every failure is answered to the transactions it belongs to.
    void exclusive(() => run(group, s, client));
  };

  return {
    transaction<T>(work: () => Promise<T>, fail: (error: unknown) => unknown): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, fail, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          // After this turn's I/O: every request that reached its write in this turn joins the group.
          setImmediate(flush);
        }
      });
    },
  };
}

type Statements = Record<"begin" | "commit" | "rollback" | "savepoint" | "release" | "undo", Statement>;

async function run(group: Asked[], s: Statements, client: Database): Promise<void> {
  // Alone, a transaction needs no savepoint: its failure undoes the whole, which is only its own.
  const alone = group.length === 1;
  const landed: Array<{ asked: Asked; value: unknown }> = [];
  let next = 0;
  try {
    s.begin.run();
    for (; next < group.length; next++) {
      const asked = group[next]!;
      if (!alone) s.savepoint.run();
      try {
        const value = await asked.work();
        if (!alone) s.release.run();
        landed.push({ asked, value });
      } catch (error) {
        // SQLite undid the whole transaction by itself (SQLITE_FULL among others): nothing of the group stays.
        if (alone || !client.inTransaction) throw error;
        s.undo.run();
        s.release.run();
        asked.reject(asked.fail(error));
      }
    }
    if (landed.length > 0) s.commit.run();
    else s.rollback.run();
  } catch (error) {
    try {
      if (client.inTransaction) s.rollback.run();
    } catch {
      // The connection is past answering; the failure below is what the callers hear.
    }
    for (const { asked } of landed) asked.reject(asked.fail(error));
    // The one that failed, and those that never ran: their transaction is gone with the group's.
    for (const asked of group.slice(next)) asked.reject(asked.fail(error));
    return;
  }
  for (const { asked, value } of landed) asked.resolve(value);
}
