// Passkeys and WebAuthn challenges: a credential id is one passkey's, anyone's; renaming and removing touch
// the owner's only; a use moves the counter and last use only forward; a challenge is taken once, for its
// purpose (and registering user), while it lives.
import { beforeEach, describe, expect, test } from "bun:test";
import type { PasskeyRecord, Store, UserRecord, WebAuthnChallengeRecord } from "../../../src/db/store.ts";
import { clock, event, newUser, tick } from "./fixtures.ts";

const minutes = (n: number) => n * 60_000;

function passkey(userId: string, overrides: Partial<PasskeyRecord> = {}): PasskeyRecord {
  return {
    id: Bun.randomUUIDv7(),
    userId,
    credentialId: `cred-${Bun.randomUUIDv7()}`,
    publicKey: "cose-key",
    counter: 0,
    transports: ["internal", "hybrid"],
    deviceType: "multiDevice",
    backedUp: true,
    name: "Laptop",
    createdAt: tick(),
    lastUsedAt: null,
    ...overrides,
  };
}

function challenge(overrides: Partial<WebAuthnChallengeRecord> = {}): WebAuthnChallengeRecord {
  const at = tick();
  return {
    id: Bun.randomUUIDv7(),
    userId: null,
    purpose: "sign_in",
    challenge: `challenge-${Bun.randomUUIDv7()}`,
    createdAt: at,
    expiresAt: new Date(Date.parse(at) + minutes(5)).toISOString(),
    ...overrides,
  };
}

export function passkeysContract(use: () => Store): void {
  describe("passkeys", () => {
    let ann: UserRecord;
    let bob: UserRecord;
    beforeEach(async () => {
      ann = await use().users.create(newUser("ann"));
      bob = await use().users.create(newUser("bob"));
    });

    test("added with its event, listed oldest first, found by credential id; a credential id is one passkey's", async () => {
      const { passkeys, audit } = use();
      const first = passkey(ann.id);
      expect(await passkeys.add(first, event("passkey.added"))).toEqual(first);
      const second = passkey(ann.id, { transports: [], backedUp: false, deviceType: "singleDevice" });
      await passkeys.add(second, event("passkey.added"));
      expect(await passkeys.list(ann.id)).toEqual([first, second]);
      expect(await passkeys.list(bob.id)).toEqual([]);
      expect(await passkeys.findByCredentialId(first.credentialId)).toEqual(first);
      expect(await passkeys.findByCredentialId("nobody's")).toBeNull();
      expect(await passkeys.add(passkey(bob.id, { credentialId: first.credentialId }), event("passkey.added"))).toBe(
        "taken",
      );
      expect(await passkeys.add(passkey(Bun.randomUUIDv7()), event("passkey.added"))).toBeNull();
      expect(await audit.list({ action: "passkey.added", limit: 10 })).toHaveLength(2);
    });

    test("the app and the last passkey removed at once: no factor is left, and no recovery code either", async () => {
      const store = use();
      // Each round a new account: the two removals race, and whichever commits second must see the other's.
      for (let round = 0; round < 8; round++) {
        const user = await store.users.create(newUser(`race${round}`));
        expect(await store.mfa.startTotp({ userId: user.id, secretSealed: "sealed", createdAt: tick() })).toBe(true);
        const codes = ["r1", "r2", "r3"].map((code) => `${code}-${round}`);
        expect(await store.mfa.confirmTotp(user.id, "sealed", 1, tick(), codes, event("mfa.totp_enrolled"))).toBe(true);
        const key = passkey(user.id);
        await store.passkeys.add(key, event("passkey.added"));
        const [app, removed] = await Promise.all([
          store.mfa.removeTotp(user.id, event("mfa.totp_removed")),
          store.passkeys.remove(user.id, key.id, event("passkey.removed")),
        ]);
        expect([app, removed]).toEqual([true, true]);
        expect((await store.mfa.factors(user.id)).recoveryCodesLeft).toBe(0);
      }
    });

    test("renamed and removed by their owner only, each with its event", async () => {
      const { passkeys, audit } = use();
      const own = passkey(ann.id);
      await passkeys.add(own, event("passkey.added"));
      expect(await passkeys.rename(bob.id, own.id, "Mine", event("passkey.renamed"))).toBeNull();
      expect(await passkeys.rename(ann.id, "not-an-id", "X", event("passkey.renamed"))).toBeNull();
      expect(await passkeys.rename(ann.id, own.id, "Phone", event("passkey.renamed"))).toEqual({
        ...own,
        name: "Phone",
      });
      expect(await passkeys.remove(bob.id, own.id, event("passkey.removed"))).toBe(false);
      expect(await passkeys.list(ann.id)).toHaveLength(1);
      expect(await passkeys.remove(ann.id, own.id, event("passkey.removed"))).toBe(true);
      expect(await passkeys.remove(ann.id, own.id, event("passkey.removed"))).toBe(false);
      expect(await passkeys.list(ann.id)).toEqual([]);
      expect(await audit.list({ action: "passkey.renamed", limit: 10 })).toHaveLength(1);
      expect(await audit.list({ action: "passkey.removed", limit: 10 })).toHaveLength(1);
    });

    test("a use moves the counter only forward, and the last use never back", async () => {
      const { passkeys } = use();
      const own = passkey(ann.id, { counter: 5 });
      await passkeys.add(own, event("passkey.added"));
      const later = tick();
      const earlier = new Date(Date.parse(later) - minutes(1)).toISOString();
      expect(await passkeys.recordUse(own.id, 5, later)).toBe(false);
      expect(await passkeys.recordUse(own.id, 4, later)).toBe(false);
      expect(await passkeys.recordUse(own.id, 0, later)).toBe(false);
      expect((await passkeys.findByCredentialId(own.credentialId))?.lastUsedAt).toBeNull();
      expect(await passkeys.recordUse(own.id, 6, later)).toBe(true);
      // A use recorded after a later one (two instances): the counter moves, the last use stays.
      expect(await passkeys.recordUse(own.id, 7, earlier)).toBe(true);
      expect(await passkeys.findByCredentialId(own.credentialId)).toMatchObject({ counter: 7, lastUsedAt: later });
      expect(await passkeys.recordUse("not-an-id", 9, later)).toBe(false);
    });

    test("an authenticator that keeps no counter (always 0) is recorded each time", async () => {
      const { passkeys } = use();
      const own = passkey(ann.id);
      await passkeys.add(own, event("passkey.added"));
      expect(await passkeys.recordUse(own.id, 0, tick())).toBe(true);
      expect(await passkeys.recordUse(own.id, 0, tick())).toBe(true);
      expect(await passkeys.recordUse(own.id, 1, tick())).toBe(true);
      expect(await passkeys.recordUse(own.id, 0, tick())).toBe(false);
    });

    test("the user's passkeys go with the user", async () => {
      const { passkeys, users } = use();
      const own = passkey(ann.id);
      await passkeys.add(own, event("passkey.added"));
      expect(await users.delete(ann.id, undefined, event("user.deleted"))).toBe(true);
      expect(await passkeys.findByCredentialId(own.credentialId)).toBeNull();
    });
  });

  describe("WebAuthn challenges", () => {
    let ann: UserRecord;
    beforeEach(async () => {
      ann = await use().users.create(newUser("ann"));
    });

    test("taken once, for its purpose and its registering user only", async () => {
      const { passkeys } = use();
      const signIn = challenge();
      const register = challenge({ purpose: "register", userId: ann.id });
      await passkeys.createChallenge(signIn);
      await passkeys.createChallenge(register);
      const now = tick();
      expect(await passkeys.takeChallenge(signIn.challenge, "register", ann.id, now)).toBeNull();
      expect(await passkeys.takeChallenge(register.challenge, "sign_in", null, now)).toBeNull();
      expect(await passkeys.takeChallenge(register.challenge, "register", Bun.randomUUIDv7(), now)).toBeNull();
      expect(await passkeys.takeChallenge(signIn.challenge, "sign_in", null, now)).toEqual(signIn);
      expect(await passkeys.takeChallenge(signIn.challenge, "sign_in", null, now)).toBeNull();
      expect(await passkeys.takeChallenge(register.challenge, "register", ann.id, now)).toEqual(register);
      expect(await passkeys.takeChallenge("never handed out", "sign_in", null, now)).toBeNull();
    });

    test("of concurrent takes, one gets it", async () => {
      const { passkeys } = use();
      const given = challenge();
      await passkeys.createChallenge(given);
      const now = tick();
      const taken = await Promise.all(
        Array.from({ length: 5 }, () => passkeys.takeChallenge(given.challenge, "sign_in", null, now)),
      );
      expect(taken.filter((one) => one !== null)).toHaveLength(1);
    });

    test("refused once expired, and pruned: by the prune job, and a few by each new challenge", async () => {
      const { passkeys } = use();
      const stale = Array.from({ length: 6 }, () => challenge());
      for (const one of stale) await passkeys.createChallenge(one);
      clock.ms += minutes(6);
      expect(await passkeys.takeChallenge(stale[0]!.challenge, "sign_in", null, tick())).toBeNull();
      expect(await passkeys.pruneChallenges(tick(), 2)).toBe(2);
      // Three expired ones remain: the next challenge clears them on its way in, and stays.
      const live = challenge();
      await passkeys.createChallenge(live);
      expect(await passkeys.pruneChallenges(tick(), 10)).toBe(0);
      expect(await passkeys.takeChallenge(live.challenge, "sign_in", null, tick())).toEqual(live);
    });
  });
}
