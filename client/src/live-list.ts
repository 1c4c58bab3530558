// A list of every category kept current: read once the subscription is open without a cursor, then changed by
// each event in commit order, and read again on RESYNC; what an event changed while a read was on its way wins.
import { SvcError } from "./errors.js";
import type { Category, CategoryEvent } from "./schema.generated.js";
import type { SubscribeOptions, SubscriptionState } from "./subscription.js";

/** What changed the list: a read (the first, or again after RESYNC or a fresh stream), or one event. */
export type LiveChange =
  | { kind: "READ" }
  | { kind: "CREATED" | "UPDATED"; id: string; category: Category }
  | { kind: "DELETED"; id: string; category: null };

export interface LiveListOptions {
  /** Called after every change once the first read is in, with the whole list (by name) and what changed. */
  onChange?: (items: readonly Category[], change: LiveChange) => void;
  /** The subscription's state (connecting, open, reconnecting with its reason and next attempt, closed). */
  onState?: (state: SubscriptionState) => void;
  /** Called once when the list stops being kept current: the subscription's refusal, or a read's. */
  onError?: (error: SvcError) => void;
}

export interface LiveList {
  /** Every category, by name without regard to case (then id), as `categories.list()` orders them. */
  readonly items: readonly Category[];
  /** The subscription's state now. */
  readonly state: SubscriptionState;
  /** Resolves once the first read is in; rejects with the error if the list stops before. */
  readonly ready: Promise<void>;
  /** Stops following; `items` stays as it was. */
  stop(): void;
}

/** What a live list needs of the categories: the whole list, and the subscription. */
export interface LiveSource {
  read(): Promise<Category[]>;
  subscribe(listener: (event: CategoryEvent) => void, options: SubscribeOptions): () => void;
}

/** svc's answers that say "not now": the read is tried again after a pause while the subscription lives. */
const READ_AGAIN = new Set(["network_error", "internal", "database_unavailable", "unexpected_response"]);
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 15_000;

export function liveList(source: LiveSource, options: LiveListOptions = {}): LiveList {
  const byId = new Map<string, Category>();
  let sorted: Category[] | null = [];
  let state: SubscriptionState = { status: "connecting" };
  let stopped = false;
  let isReady = false;
  /** The read under way (a later one makes an earlier one's answer stale), and the ids changed since it began. */
  let reading = 0;
  const touched = new Set<string>();
  let readTimer: ReturnType<typeof setTimeout> | undefined;

  let settle!: { resolve: () => void; reject: (error: SvcError) => void };
  const ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  ready.catch(() => {}); // an app that never awaits it is not told of an unhandled rejection

  const changed = (change: LiveChange) => {
    sorted = null;
    if (isReady) options.onChange?.(items(), change);
  };

  const items = (): Category[] => {
    sorted ??= [...byId.values()].sort(byName);
    return sorted;
  };

  const fail = (error: SvcError) => {
    if (stopped) return;
    stop(error);
    options.onError?.(error);
  };

  const read = async (failures = 0) => {
    clearTimeout(readTimer);
    const mine = ++reading;
    touched.clear();
    try {
      const listed = await source.read();
      if (stopped || mine !== reading) return;
      const fresh = new Map(listed.map((category) => [category.id, category]));
      for (const id of byId.keys()) if (!fresh.has(id) && !touched.has(id)) byId.delete(id);
      for (const [id, category] of fresh) if (!touched.has(id)) byId.set(id, category);
      isReady = true;
      changed({ kind: "READ" });
      settle.resolve();
    } catch (error) {
      if (stopped || mine !== reading) return;
      const failure = error as SvcError;
      if (!READ_AGAIN.has(failure.code)) return fail(failure);
      const wait = Math.min(FIRST_WAIT_MS * 2 ** failures, LONGEST_WAIT_MS);
      readTimer = setTimeout(() => void read(failures + 1), wait);
    }
  };

  const apply = (event: CategoryEvent) => {
    // Stopped: items stays as it was, and onChange is not called again.
    if (stopped) return;
    if (event.kind === "RESYNC") return void read();
    touched.add(event.id);
    if (event.kind === "DELETED" || !event.category) {
      if (!byId.delete(event.id)) return;
      changed({ kind: "DELETED", id: event.id, category: null });
    } else {
      byId.set(event.id, event.category);
      changed({ kind: event.kind === "CREATED" ? "CREATED" : "UPDATED", id: event.id, category: event.category });
    }
  };

  const unsubscribe = source.subscribe(apply, {
    // From an open stream without a cursor on, every change reaches apply: a read begun then misses none.
    onOpen: ({ fresh }) => {
      if (fresh) void read();
    },
    onState: (next) => {
      // After stop() the list reports its own end (with the error that ended it), not the subscription's.
      if (stopped) return;
      state = next;
      options.onState?.(next);
    },
    onError: fail,
  });

  function stop(error: SvcError | null = null) {
    if (stopped) return;
    stopped = true;
    clearTimeout(readTimer);
    unsubscribe();
    if (state.status !== "closed") {
      state = { status: "closed", error };
      options.onState?.(state);
    }
    // Whoever awaits the first read hears that there will be none.
    if (!isReady) settle.reject(error ?? stoppedFirst());
  }

  return {
    get items() {
      return items();
    },
    get state() {
      return state;
    },
    ready,
    stop: () => stop(),
  };
}

/** What `ready` rejects with when the list is stopped before its first read. */
function stoppedFirst(): SvcError {
  return new SvcError({
    status: 0,
    code: "network_error",
    title: "Aborted",
    detail: "The live list was stopped before its first read.",
  });
}

/** svc's order: the name's key (trimmed, NFC, lower case), then the id. */
function byName(a: Category, b: Category): number {
  const key = (category: Category) => category.name.trim().normalize("NFC").toLowerCase();
  const [x, y] = [key(a), key(b)];
  if (x !== y) return x < y ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
