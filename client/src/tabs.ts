// Tabs share news of the session over a BroadcastChannel: in json mode "read the store again"; in cookie mode
// the session itself, which is right only where every client shares one cookie jar: a browser's pages. In a
// server process each client may hold a jar (and a user) of its own.
import type { Held, SessionMode } from "./held-session.js";

/** The channel to the other tabs, delivering their messages to `heard`; null where there is none to share. */
export function tabChannel(
  mode: SessionMode,
  name: string,
  heard: (message: unknown) => void,
): BroadcastChannel | null {
  const tabs = mode === "json" || typeof (globalThis as { document?: unknown }).document !== "undefined";
  const channel = tabs && typeof BroadcastChannel === "function" ? new BroadcastChannel(name) : null;
  if (channel) {
    channel.onmessage = (event: MessageEvent) => heard(event.data);
    // Node and Bun: an open channel would keep the process alive after its last call.
    (channel as { unref?: () => void }).unref?.();
  }
  return channel;
}

/**
 * The session another tab sent (cookie mode), or undefined when it is no news: messages may cross, and a
 * renewal older than the one held, or than this tab's sign-out, is news no more.
 */
export function tabNews(message: unknown, current: Held | null, endedAt: number): Held | null | undefined {
  const { held } = (message ?? {}) as { held?: Held | null };
  if (held === undefined) return undefined;
  if (held && current && held.issuedAt < current.issuedAt) return undefined;
  if (held && held.issuedAt < endedAt) return undefined;
  return held;
}
