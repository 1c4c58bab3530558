// A hub that starts while changes are committing (a new or restarted instance joining a busy database):
// a change notice that arrives while it reads where the log stands starts a catch-up from number 0,
// which walked lastSeq back below where start-up set it and handed the changes after a resuming
// subscriber's cursor out again, after its replay had them. Seen in test/e2e/resume.test.ts (restart
// on PostgreSQL) as a run of duplicates; held here with a fake feed and log. Notices now wait until
// the hub knows where the log stands.
import { expect, test } from "bun:test";
import type { CategoryEventLog, LoggedChange } from "../src/db/store.ts";
import { createLoggers } from "../src/observability/log.ts";
import { formatCursor } from "../src/realtime/cursors.ts";
import { createHub } from "../src/realtime/hub.ts";

const DATABASE = "ab";
const LOGGED = 300;

test("a hub started amid commits gives a resuming subscriber each change after its cursor once", async () => {
  const logged: LoggedChange[] = Array.from({ length: LOGGED }, (_, i) => ({
    seq: i + 1,
    change: { kind: "DELETED", id: `c${i + 1}`, category: null },
  }));
  // The catch-up's first read waits until the subscriber is in; the reads of where the log stands do not.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reads = 0;
  let notify!: () => void;
  let caughtUp!: () => void;
  const done = new Promise<void>((resolve) => (caughtUp = resolve));
  const log: CategoryEventLog = {
    identity: async () => DATABASE,
    epoch: async () => DATABASE,
    bounds: async () => ({ first: 1, last: LOGGED }),
    async after(seq, limit) {
      if (reads++ === 0) await released;
      // Read past the end only once every page before has been handed out.
      if (seq >= LOGGED) caughtUp();
      return logged.filter((entry) => entry.seq > seq).slice(0, limit);
    },
    prune: async () => 0,
  };
  const hub = createHub({
    // A change committed on another instance: its notice comes the moment the hub listens.
    feed: {
      async listen(changed) {
        notify = changed;
        changed();
        return async () => {};
      },
    },
    log,
    perUser: 10,
    max: 10,
    buffer: 1024,
    recheckMs: 60_000,
    recheckToken: async () => true,
    metrics: { sent() {}, dropped() {} },
    logger: createLoggers("error", { write: () => true }).logger,
  });
  const subscription = await hub.subscribe({
    owner: "user:1",
    authorization: null,
    expiresAt: null,
    transport: "sse",
    after: formatCursor({ database: DATABASE, seq: LOGGED - 2 }),
  });
  release();
  // Another notice: the catch-up reads on once it has handed out what it read, and then finds nothing.
  notify();
  await done;
  await hub.close();
  const seen: string[] = [];
  for await (const item of subscription) seen.push("ending" in item ? item.ending.code : item.id);
  expect(seen).toEqual([`c${LOGGED - 1}`, `c${LOGGED}`]);
});
