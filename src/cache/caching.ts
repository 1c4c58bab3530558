// The cache layer: the store services use, with reads kept in memory while the database says their
// tables are unchanged, and whole answers kept the same way. Services and the authenticator see the
// plain contract; table versions never leave this folder.
//
// Right across instances: every kept read carries the table versions read before it and is used only
// while the database still reports exactly those, so a write on any instance (which bumps them in its
// transaction) is seen by the next request everywhere. Within one request the versions are read once,
// with its token, and serve all of its cached reads: on PostgreSQL that is one round trip, not two.
import { AsyncLocalStorage } from "node:async_hooks";
import { type Awaitable, chain } from "../lib/awaitable.ts";
import { setBounded } from "../lib/bounded-map.ts";
import type {
  CategoryPage,
  CategoryRecord,
  CategoryStore,
  Store,
  TableVersions,
  UserRecord,
  UserStore,
  VersionedStore,
} from "../db/store.ts";
import { AnswerCache, type Answer } from "./answers.ts";
import { VersionedCache } from "./versioned-cache.ts";

/** What one request has read so far. */
interface RequestState {
  versions: TableVersions | undefined;
}

export interface AnswerLookup {
  /** The answer kept under the key, while the tables are as they were when it was kept. */
  hit: Answer | undefined;
  /** Keeps an answer computed from here on under the key, tagged with the versions read for this lookup. */
  keep(answer: Answer): void;
}

export interface Caching {
  /** The contract, with reads answered from memory while their tables are unchanged. */
  store: Store;
  /** Whole answers, kept while both tables are unchanged. */
  answers: {
    /** At once while the request has read the versions (with its token) or nothing was committed since they were last read. */
    lookup(key: string): Awaitable<AnswerLookup>;
    readonly size: number;
  };
  /** Runs one request's work: the versions read with its token serve all of its cached reads. */
  request<T>(work: () => T): T;
}

export const CACHE_BOUNDS = {
  /** Token holders' records, each kept while the users table is unchanged. */
  holders: 10_000,
  /** Pages of users and lists of categories (each a page asked for, or the whole list). */
  userPages: 64,
  categoryLists: 64,
  /** Whole answers: entries, and characters of keys and answers together. */
  answers: { entries: 2000, chars: 8 * 1024 * 1024 },
} as const;

export function caching(base: VersionedStore): Caching {
  const requests = new AsyncLocalStorage<RequestState>();

  /** The versions this request read, or a fresh read (kept for the rest of the request). */
  function versions(): Awaitable<TableVersions> {
    const state = requests.getStore();
    if (state?.versions) return state.versions;
    return chain(base.versions(), (read) => {
      if (state) state.versions = read;
      return read;
    });
  }

  /** After the request's own write, its later reads must see it: the versions are read again. */
  function wrote<T>(write: Promise<T>): Promise<T> {
    const state = requests.getStore();
    return state ? write.finally(() => (state.versions = undefined)) : write;
  }

  const holders = new Map<string, { usersVersion: number; user: UserRecord }>();
  const pages = new VersionedCache<UserRecord[]>(CACHE_BOUNDS.userPages);
  const counts = new VersionedCache<number>(1);
  const lists = new VersionedCache<CategoryRecord[]>(CACHE_BOUNDS.categoryLists);
  const answers = new AnswerCache(CACHE_BOUNDS.answers.chars, CACHE_BOUNDS.answers.entries);

  const users: UserStore = {
    ...base.users,
    list(page) {
      const key = "before" in page ? `${page.limit} <${page.before}` : `${page.limit} ${page.after ?? ""}`;
      return chain(versions(), ({ users: version }) => pages.get(key, version, () => base.users.list(page)));
    },
    count() {
      return chain(versions(), ({ users: version }) => counts.get("", version, () => base.users.count()));
    },
    create: (...args) => wrote(base.users.create(...args)),
    update: (...args) => wrote(base.users.update(...args)),
    administer: (...args) => wrote(base.users.administer(...args)),
    setPassword: (...args) => wrote(base.users.setPassword(...args)),
    delete: (...args) => wrote(base.users.delete(...args)),
  };

  const categories: CategoryStore = {
    ...base.categories,
    async list(page?: CategoryPage) {
      const { categories: version } = await versions();
      // The anchor's name too: a page after a category renamed meanwhile is another page.
      const key = `${page?.first ?? ""} ${page?.after?.id ?? ""} ${page?.after?.name ?? ""}`;
      return lists.get(key, version, () => base.categories.list(page));
    },
    create: (category) => wrote(base.categories.create(category)),
    update: (...args) => wrote(base.categories.update(...args)),
    delete: (...args) => wrote(base.categories.delete(...args)),
  };

  const store: Store = {
    ...base,
    users,
    categories,
    resets: { ...base.resets, redeem: (...args) => wrote(base.resets.redeem(...args)) },
    invitations: { ...base.invitations, redeem: (...args) => wrote(base.invitations.redeem(...args)) },
    mailedResets: { ...base.mailedResets, redeem: (...args) => wrote(base.mailedResets.redeem(...args)) },
    emailChanges: { ...base.emailChanges, confirm: (...args) => wrote(base.emailChanges.confirm(...args)) },
    emailVerifications: {
      ...base.emailVerifications,
      redeem: (...args) => wrote(base.emailVerifications.redeem(...args)),
      mark: (...args) => wrote(base.emailVerifications.mark(...args)),
    },
    tokenHolder(userId, jti, sessionId) {
      return chain(base.tokenState(userId, jti, sessionId), (state) => {
        if (!state) return null;
        const request = requests.getStore();
        if (request) request.versions = state.versions;
        // The record is read again only when the users table has changed since it was last read. It is
        // read after the version, so a write in between makes it newer than its tag, which costs one
        // more read later, never a stale answer.
        const known = holders.get(userId);
        const { revoked, expiresAt } = state;
        if (known?.usersVersion === state.versions.users) return { user: known.user, revoked, expiresAt };
        return base.users.findById(userId).then((user) => {
          if (!user) return null;
          setBounded(holders, userId, { usersVersion: state.versions.users, user }, CACHE_BOUNDS.holders);
          return { user, revoked, expiresAt };
        });
      });
    },
    load: (...args) => wrote(base.load(...args)),
  };

  return {
    store,
    answers: {
      lookup(key) {
        return chain(versions(), (at) => ({
          hit: answers.get(key, at),
          keep: (answer) => answers.set(key, { ...answer, versions: at }),
        }));
      },
      get size() {
        return answers.size;
      },
    },
    request: (work) => requests.run({ versions: undefined }, work),
  };
}
