// Where this client holds its session, and who hears of it: memory and (json mode) the store, this client's
// listeners and, over a BroadcastChannel, the other tabs. In cookie mode the browser's cookie holds the
// refresh token and no store is written. When a session starts, is renewed or ends is Auth's (auth.ts).
import { type AuthOptions, type Held, readHeld, type Session, type SessionMode, sessionOf } from "./held-session.js";
import { keepAlive, type KeepAlive } from "./keep-alive.js";
import type { SessionStorage } from "./storage.js";
import { tabChannel, tabNews } from "./tabs.js";

export class SessionKeeper {
  readonly #mode: SessionMode;
  readonly #storage: SessionStorage;
  readonly #key: string;
  readonly #keepAlive: KeepAlive | null; // renews the session when it is due; null without keepAlive
  readonly #listeners = new Set<(session: Session | null) => void>();
  readonly #channel: BroadcastChannel | null;
  readonly #unsubscribe: (() => void) | null;
  #held: Held | null = null;
  /** When this client last saw its session end (ms): older news from other tabs is ignored. */
  #endedAt = 0;
  /** Bumped by every end of the session: what a renewal begun before it brings back is not kept. */
  #generation = 0;
  /** Cookie mode: whether the cookie has been tried for a session since the page loaded. */
  restored = false;
  /** Resolves once the stored session has been read (at once for a synchronous store). */
  readonly ready: Promise<void>;

  /** `channel`: the name the tabs share news under; `renewDue`: keepAlive's call when the session is due. */
  constructor(options: AuthOptions, channel: string, renewDue: (held: Held) => void) {
    this.#mode = options.mode;
    this.#storage = options.storage;
    this.#key = options.storageKey;
    this.#keepAlive = options.keepAlive ? keepAlive(() => this.#held, renewDue) : null;
    this.ready = options.mode === "json" ? this.reload(false) : Promise.resolve();
    this.#unsubscribe = options.storage.subscribe?.(this.#key, () => void this.reload(true)) ?? null;
    this.#channel = tabChannel(options.mode, channel, (message) => this.#heard(message));
  }

  get held(): Held | null {
    return this.#held;
  }

  /** Bumped by every end: a renewal compares it before and after, and keeps nothing if it moved. */
  get generation(): number {
    return this.#generation;
  }

  get session(): Session | null {
    return sessionOf(this.#held);
  }

  onChange(listener: (session: Session | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops listening to the store and the other tabs; the session stays where it is kept. */
  close(): void {
    this.#keepAlive?.stop();
    this.#channel?.close();
    this.#unsubscribe?.();
    this.#listeners.clear();
  }

  async keep(held: Held): Promise<void> {
    const generation = this.#generation;
    this.#held = held;
    if (this.#mode === "json") await this.#storage.setItem(this.#key, JSON.stringify(held));
    // An end while the store was writing: it removed the session after this wrote it; nothing to tell.
    if (generation !== this.#generation) return;
    this.#announce(held);
  }

  async end(): Promise<void> {
    this.#generation++;
    this.#endedAt = Date.now();
    const had = this.#held !== null;
    this.#held = null;
    if (this.#mode === "json") await this.#storage.removeItem(this.#key);
    if (had) this.#announce(null);
  }

  /** Reads the stored session (json mode); tells listeners when it differs from the one held. */
  async reload(notify: boolean): Promise<void> {
    if (this.#mode !== "json") return;
    const held = await readHeld(this.#storage, this.#key);
    if (JSON.stringify(held) === JSON.stringify(this.#held)) return;
    this.#held = held;
    if (notify) this.#notify();
    else this.#keepAlive?.schedule();
  }

  /** Tells this client's listeners, and the other tabs (cookie mode: with the token, which no store holds). */
  #announce(held: Held | null): void {
    this.#notify();
    this.#channel?.postMessage(this.#mode === "cookie" ? { held } : { changed: true });
  }

  #notify(): void {
    this.#keepAlive?.schedule();
    const session = this.session;
    for (const listener of this.#listeners) listener(session);
  }

  /** Another tab's news: json mode reads the store again; cookie mode takes the session it sent. */
  #heard(message: unknown): void {
    if (this.#mode === "json") return void this.reload(true);
    const held = tabNews(message, this.#held, this.#endedAt);
    if (held === undefined) return;
    // Another tab's sign-out ends the session here too: a renewal this tab began before it keeps nothing.
    if (held === null) this.#generation++;
    this.#held = held;
    this.restored = true;
    this.#notify();
  }
}
