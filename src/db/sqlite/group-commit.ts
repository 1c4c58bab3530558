// Group commit: the timed transactions asked for within one turn of the event loop, or while the previous
// group runs, commit together: one COMMIT, and so one wait for the disk, for all of them. Each runs inside
// a savepoint of its own, so each still lands or is undone alone, and none is answered before the group's
// outcome is known: a success once the COMMIT has made it durable, a failure of its own (a clash, a lost
// compare-and-set) once the COMMIT has made true what it was refused against. With synchronous = FULL every
// COMMIT waits for the WAL to reach the disk, and under load a refresh spent half of its CPU in its own
// (bench/results.md, "#59: group commit").
//
// A group runs its transactions one after another on the one connection, in the order they were asked
// for: each sees what those before it wrote, as it would had they committed first, so the answers are
// those of some serial order. What SQLite undoes as a whole (a full disk, an I/O error, a lock another
// process held past busy_timeout) fails every transaction of the group, as it would have failed each:
// also those whose own failure rested on writes that never landed.
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
  /** Once every transaction asked for so far has settled: finalizes the statements (before the connection closes). */
  close(): Promise<void>;
}

/** `exclusive` holds the connection for a group: no other operation's statements run inside its transaction. */
export function groupCommit(client: Database, exclusive: <T>(work: () => Promise<T>) => Promise<T>): GroupCommit {
  const s: Statements = {
    // IMMEDIATE takes the write lock at once: another process's writes wait (busy_timeout).
    begin: client.prepare("BEGIN IMMEDIATE"),
    commit: client.prepare("COMMIT"),
    rollback: client.prepare("ROLLBACK"),
    savepoint: client.prepare("SAVEPOINT grouped"),
    release: client.prepare("RELEASE grouped"),
    undo: client.prepare("ROLLBACK TO grouped"),
  };

  let waiting: Asked[] = [];
  /** The group asked for and not yet run, or running: settles (never rejects) once it has. */
  let pending: Promise<void> | null = null;

  const flush = (settled: () => void) => {
    const group = waiting;
    waiting = [];
    void exclusive(() => run(group, s, client)).finally(() => {
      if (waiting.length === 0) pending = null;
      settled();
    });
  };
  /** The next group, after this turn's I/O: every request that reaches its write in this turn joins it. */
  const schedule = () => new Promise<void>((settled) => setImmediate(() => flush(settled)));

  return {
    transaction<T>(work: () => Promise<T>, fail: (error: unknown) => unknown): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, fail, resolve: resolve as (value: unknown) => void, reject });
        if (waiting.length === 1) {
          const before = pending;
          pending = before ? before.then(schedule) : schedule();
        }
      });
    },
    async close() {
      while (pending) await pending;
      for (const statement of Object.values(s)) statement.finalize();
    },
  };
}

type Statements = Record<"begin" | "commit" | "rollback" | "savepoint" | "release" | "undo", Statement>;

/** Runs one group to its end; every transaction in it is settled once this returns. Never throws. */
async function run(group: Asked[], s: Statements, client: Database): Promise<void> {
  // Alone, a transaction needs no savepoint: its failure undoes the whole, which is only its own.
  const alone = group.length === 1;
  const outcomes: Array<{ asked: Asked; landed: boolean; value: unknown }> = [];
  let next = 0;
  try {
    s.begin.run();
    for (; next < group.length; next++) {
      const asked = group[next]!;
      if (!alone) s.savepoint.run();
      try {
        const value = await asked.work();
        if (!alone) s.release.run();
        outcomes.push({ asked, landed: true, value });
      } catch (error) {
        // SQLite undid the whole transaction by itself (SQLITE_FULL among others): nothing of the group stays.
        if (alone || !client.inTransaction) throw error;
        s.undo.run();
        s.release.run();
        outcomes.push({ asked, landed: false, value: error });
      }
    }
    if (outcomes.some((o) => o.landed)) s.commit.run();
    else s.rollback.run();
  } catch (error) {
    try {
      if (client.inTransaction) s.rollback.run();
    } catch {
      // The connection is past answering; the failure below is what the callers hear.
    }
    // Every one of them, whether it had landed, failed on its own or not yet run: the group is gone.
    for (const asked of group) asked.reject(asked.fail(error));
    return;
  }
  for (const { asked, landed, value } of outcomes) {
    if (landed) asked.resolve(value);
    else asked.reject(asked.fail(value));
  }
}
