// Where a json-mode session is kept between page loads and shared between clients: any object with Web
// Storage's three methods (sync or async), so `localStorage` itself fits, and so do React Native's
// AsyncStorage and a server-side store.

/** A key-value store for the session. Its methods may return promises. */
export interface SessionStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
  /**
   * Optional: calls `listener` when another holder (a client sharing this store, another tab) changed `key`,
   * so that this client's session follows at once instead of at its next request.
   */
  subscribe?(key: string, listener: () => void): () => void;
}

/** Memory only (the default): the session ends with the page or process. Share one between clients to share their session. */
export function memoryStorage(): SessionStorage {
  const values = new Map<string, string>();
  const listeners = new Map<string, Set<() => void>>();
  const changed = (key: string) => {
    for (const listener of listeners.get(key) ?? []) listener();
  };
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem(key, value) {
      values.set(key, value);
      changed(key);
    },
    removeItem(key) {
      values.delete(key);
      changed(key);
    },
    subscribe(key, listener) {
      const set = listeners.get(key) ?? new Set();
      listeners.set(key, set);
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}

/**
 * The browser's localStorage: the session survives reloads and is shared by the origin's tabs. Its refresh
 * token can be read by any script on the page, so one XSS flaw can steal the session for as long as it
 * lasts; prefer `mode: "cookie"` (an HttpOnly cookie no script can read) where svc is on your origin or lists
 * it. See docs/client/auth.md.
 */
export function localStorageAdapter(store: Storage = globalThis.localStorage): SessionStorage {
  return {
    getItem: (key) => store.getItem(key),
    setItem: (key, value) => store.setItem(key, value),
    removeItem: (key) => store.removeItem(key),
    subscribe(key, listener) {
      // The storage event fires in every other tab of the origin when one changes the key.
      const onStorage = (event: StorageEvent) => {
        if (event.key === key || event.key === null) listener();
      };
      globalThis.addEventListener("storage", onStorage);
      return () => globalThis.removeEventListener("storage", onStorage);
    },
  };
}
