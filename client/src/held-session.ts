// The session as this client holds it: in memory, and (json mode) in storage, shared with other clients and
// tabs; when its token is due for renewal.
import { isSvcError } from "./errors.js";
import type { components, operations } from "./openapi.generated.js";
import type { SessionStorage } from "./storage.js";

export type Me = components["schemas"]["Me"];
export type LoginAnswer = components["schemas"]["Login"];
export type TokenPair = components["schemas"]["TokenPair"];
type ResetBody = Omit<operations["redeemPasswordReset"]["requestBody"]["content"]["application/json"], "mode">;
/** auth/password-reset's two forms: an administrator's code for a username, or a mailed link's token. */
export type ResetRedemption =
  | Required<Pick<ResetBody, "username" | "reset_code" | "new_password">>
  | Required<Pick<ResetBody, "token" | "new_password">>;

/** json: the refresh token is the client's to keep (in `storage`). cookie: svc keeps it in an HttpOnly cookie. */
export type SessionMode = "json" | "cookie";
export type LogoutScope = "local" | "others" | "global";

export interface Session {
  user: Me;
  mode: SessionMode;
  /** When the access token expires; the client renews it shortly before. */
  tokenExpiresAt: Date;
  /** When the session ends unless it is renewed before (the refresh token's expiry). */
  expiresAt: Date;
}

export interface AuthOptions {
  mode: SessionMode;
  storage: SessionStorage;
  storageKey: string;
  /** The longest a refresh may take before it counts as no answer (network_error); 30 s by default. */
  renewTimeoutMs?: number;
  /** Renew on a timer when the token is due, calls or not (a page left open stays signed in). */
  keepAlive?: boolean;
}

/** What is kept in storage (json mode) and in memory (both). Times are this machine's, in ms. */
export interface Held {
  v: 1;
  mode: SessionMode;
  token: string;
  issuedAt: number;
  expiresAt: number;
  refreshToken: string | null;
  refreshExpiresAt: number;
  user: Me;
}

/** Renewed this long before it expires: a fifth of its life, at most 30 s. */
const RENEW_SHARE = 0.2;
const RENEW_AT_MOST_MS = 30_000;

/** The longest delay setTimeout takes (about 24.8 days; a longer one fires at once). */
export const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

/** Whether the token held is due for renewal (see renewAt). */
export function dueForRenewal(held: Held): boolean {
  return Date.now() >= renewAt(held);
}

/** What the client shows of the session held: the user and when the token and the session expire. */
export function sessionOf(held: Held | null): Session | null {
  if (!held) return null;
  return {
    user: held.user,
    mode: held.mode,
    tokenExpiresAt: new Date(held.expiresAt),
    expiresAt: new Date(held.refreshExpiresAt),
  };
}

/** When a token is renewed: a fifth of its life before it expires, at most 30 s before. */
export function renewAt(held: Held): number {
  return held.expiresAt - Math.min(RENEW_AT_MOST_MS, (held.expiresAt - held.issuedAt) * RENEW_SHARE);
}

export function heldFrom(pair: TokenPair, user: Me, mode: SessionMode): Held {
  const now = Date.now();
  return {
    v: 1,
    mode,
    token: pair.token,
    issuedAt: now,
    expiresAt: now + pair.expires_in * 1000,
    refreshToken: pair.refresh_token ?? null,
    refreshExpiresAt: now + pair.refresh_expires_in * 1000,
    user,
  };
}

/** The session kept in `storage` under `key` (json mode); null for none, or for one this client cannot read. */
export async function readHeld(storage: SessionStorage, key: string): Promise<Held | null> {
  const read = storage.getItem(key);
  return parseHeld(typeof read === "string" || read === null ? read : await read);
}

function parseHeld(text: string | null): Held | null {
  if (text === null) return null;
  try {
    const held = JSON.parse(text) as Held;
    return held?.v === 1 && typeof held.token === "string" ? held : null;
  } catch {
    return null;
  }
}

const sites = new Map<string, object>();
export function siteHolder(baseUrl: string): object {
  let holder = sites.get(baseUrl);
  if (!holder) sites.set(baseUrl, (holder = {}));
  return holder;
}

/**
 * Whether svc's refusal of a refresh ends the session: the token spent, expired or ended, the account
 * disabled, or (cookie mode) no cookie. No answer at all (offline, svc busy) settles nothing.
 */
export function sessionOver(error: unknown): boolean {
  return isSvcError(error, "account_disabled", "validation_failed") || (isSvcError(error) && error.status === 401);
}
