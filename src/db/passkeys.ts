// Passkeys (WebAuthn credentials) per user, and the challenges handed out for registering one or signing
// in with one. A passkey's counter and last use only move forward, so of two answers replayed or raced
// with the same counter one lands; a challenge is taken once, atomically, by its value.
import { lockUserIn } from "./account-token-rows.ts";
import { and, asc, count, eq, inArray, isNotNull, isNull, lt, or } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { first, pruneBefore, withId } from "./rows.ts";
import { insertForUser, ROLL_BACK, runUndoable, TIMED } from "./transactions.ts";
import { hasWayIn } from "./identities.ts";

export type PasskeyDeviceType = "singleDevice" | "multiDevice";

/** A passkey as svc keeps it: what @simplewebauthn/server needs to check an assertion, and what its owner sees. */
export interface PasskeyRecord {
  id: string;
  userId: string;
  /** base64url, as a browser's answer names it. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  /** As the browser reported them at registration (usb, nfc, ble, internal, hybrid...). */
  transports: string[];
  deviceType: PasskeyDeviceType;
  backedUp: boolean;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export type ChallengePurpose = "register" | "sign_in";

export interface WebAuthnChallengeRecord {
  id: string;
  /** The registering user; null for a sign-in, where the passkey names its user. */
  userId: string | null;
  purpose: ChallengePurpose;
  /** base64url, as the options carry it and the browser's clientDataJSON returns it. */
  challenge: string;
  createdAt: string;
  expiresAt: string;
}

export interface PasskeyStore {
  /**
   * Adds the passkey with its audit event in one change. "taken": a passkey with this credential id exists
   * already (anyone's); null: the user is gone. Either way nothing is written.
   */
  add(passkey: PasskeyRecord, audit: AuditEvent): Promise<PasskeyRecord | "taken" | null>;
  /** The user's passkeys, oldest first. */
  list(userId: string): Promise<PasskeyRecord[]>;
  /** The passkey a browser's answer names, whoever's it is; null: none. */
  findByCredentialId(credentialId: string): Promise<PasskeyRecord | null>;
  /** Renames one of the user's passkeys, with its audit event; null: the user has none with this id. */
  rename(userId: string, id: string, name: string, audit: AuditEvent): Promise<PasskeyRecord | null>;
  /**
   * Deletes one of the user's passkeys, with its audit event; with it the recovery codes when no factor is
   * left (no confirmed app, no other passkey). false: the user has none with this id; "last": it is the
   * account's last way to sign in (no password, no identity at a provider, no other passkey), nothing written.
   */
  remove(userId: string, id: string, audit: AuditEvent): Promise<boolean | "last">;
  /**
   * Records a checked assertion: the counter moves to `counter` only if that is forward (above the stored
   * one, or both 0 for an authenticator that keeps none), and last_used_at to `at` unless it is later
   * already. false: the counter was not forward (a replay, or another answer landed first); nothing written.
   */
  recordUse(id: string, counter: number, at: string): Promise<boolean>;
  /** Keeps a challenge handed out; forgets a few expired ones on the way, so unanswered ones do not pile up. */
  createChallenge(challenge: WebAuthnChallengeRecord): Promise<void>;
  /**
   * Takes the challenge with this value for `purpose` (and, for a registration, `userId`), once: of
   * concurrent takes one gets it. null: no such challenge (unknown, used, another purpose or user) or it
   * expired at `at`.
   */
  takeChallenge(
    challenge: string,
    purpose: ChallengePurpose,
    userId: string | null,
    at: string,
  ): Promise<WebAuthnChallengeRecord | null>;
  /** Forgets up to `limit` challenges expired at `now`; how many went. */
  pruneChallenges(now: string, limit: number): Promise<number>;
}

/** How many expired challenges each new one clears away. */
const PRUNED_PER_CHALLENGE = 4;

export function passkeyStore(dialect: Dialect): PasskeyStore {
  const { db, run, write, transaction, tables } = dialect;
  const { passkeys, webauthnChallenges: challenges, mfaTotp, mfaRecoveryCodes } = tables;
  const asRecord = (row: typeof passkeys.$inferSelect): PasskeyRecord => ({
    id: row.id,
    userId: row.userId,
    credentialId: row.credentialId,
    publicKey: row.publicKey,
    counter: row.counter,
    transports: row.transports ? row.transports.split(",") : [],
    deviceType: row.deviceType as PasskeyDeviceType,
    backedUp: row.backedUp === 1,
    name: row.name,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
  });
  const usersPasskey = (userId: string, id: string) => and(eq(passkeys.id, id), eq(passkeys.userId, userId));

  return {
    async add(passkey, audit) {
      const key = parseId(passkey.userId);
      if (!key) return null;
      return insertForUser(dialect, audit, async (tx) => {
        const inserted = first(
          await tx
            .insert(passkeys)
            .values({
              ...passkey,
              userId: key,
              transports: passkey.transports.length > 0 ? passkey.transports.join(",") : null,
              backedUp: passkey.backedUp ? 1 : 0,
            })
            .onConflictDoNothing()
            .returning(),
        );
        return inserted && asRecord(inserted);
      });
    },
    async list(userId) {
      const key = parseId(userId);
      if (!key) return [];
      const rows = await run(() =>
        db.select().from(passkeys).where(eq(passkeys.userId, key)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)),
      );
      return rows.map(asRecord);
    },
    async findByCredentialId(credentialId) {
      const row = first(
        await run(() => db.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)).limit(1)),
      );
      return row && asRecord(row);
    },
    rename(userId, id, name, audit) {
      const [user, key] = [parseId(userId), parseId(id)];
      if (!user || !key) return Promise.resolve(null);
      return transaction(async (tx) => {
        const renamed = first(await tx.update(passkeys).set({ name }).where(usersPasskey(user, key)).returning());
        if (!renamed) return null;
        await recordIn(tx, tables, audit);
        return asRecord(renamed);
      }, TIMED);
    },
    remove(userId, id, audit) {
      const [user, key] = [parseId(userId), parseId(id)];
      if (!user || !key) return Promise.resolve(false);
      return runUndoable(
        transaction,
        async (tx) => {
          // The user's row first, as the app's removal takes it (mfa.ts): the last factor's removal sees the other's.
          await lockUserIn(tx, dialect, userId);
          const gone = await tx.delete(passkeys).where(usersPasskey(user, key)).returning({ id: passkeys.id });
          if (gone.length === 0) return false;
          // An account made through a provider may have no password: its last passkey is not its last way in.
          if (!(await hasWayIn(tx, tables, user))) throw ROLL_BACK;
          const [keys] = await tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user));
          const [apps] = await tx
            .select({ n: count() })
            .from(mfaTotp)
            .where(and(eq(mfaTotp.userId, user), isNotNull(mfaTotp.confirmedAt)));
          // With no factor left, recovery codes would recover nothing: they go with the last factor (as the app's
          // removal does), or a passkey added later would bring the old ones back to life.
          if (keys!.n === 0 && apps!.n === 0)
            await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, user));
          await recordIn(tx, tables, audit);
          return true;
        },
        "last" as const,
      );
    },
    recordUse: (id, counter, at) =>
      withId(id, false, (key) => {
        const forward = counter === 0 ? eq(passkeys.counter, 0) : lt(passkeys.counter, counter);
        return transaction(async (tx) => {
          // The compare-and-set: of two answers with one counter, the first to move it lands.
          const moved = await tx
            .update(passkeys)
            .set({ counter })
            .where(and(eq(passkeys.id, key), forward))
            .returning({ id: passkeys.id });
          if (moved.length === 0) return false;
          await tx
            .update(passkeys)
            .set({ lastUsedAt: at })
            .where(and(eq(passkeys.id, key), or(isNull(passkeys.lastUsedAt), lt(passkeys.lastUsedAt, at))));
          return true;
        }, TIMED);
      }),
    createChallenge(challenge) {
      return transaction(async (tx) => {
        await tx.insert(challenges).values(challenge);
        const expired = tx
          .select({ id: challenges.id })
          .from(challenges)
          .where(lt(challenges.expiresAt, challenge.createdAt))
          .limit(PRUNED_PER_CHALLENGE);
        await tx
          .delete(challenges)
          .where(and(inArray(challenges.id, expired), lt(challenges.expiresAt, challenge.createdAt)));
      }, TIMED);
    },
    async takeChallenge(challenge, purpose, userId, at) {
      const user = userId === null ? null : parseId(userId);
      if (userId !== null && !user) return null;
      // Deleted whatever its expiry: an expired challenge is as spent as a used one.
      const taken = first(
        await write(() =>
          db
            .delete(challenges)
            .where(
              and(
                eq(challenges.challenge, challenge),
                eq(challenges.purpose, purpose),
                user === null ? isNull(challenges.userId) : eq(challenges.userId, user),
              ),
            )
            .returning(),
        ),
      );
      if (!taken || !(taken.expiresAt > at)) return null;
      return taken;
    },
    pruneChallenges: (now, limit) =>
      write(() => pruneBefore(db, challenges, challenges.id, challenges.expiresAt, now, limit)),
  };
}
