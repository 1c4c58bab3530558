// Second factors as stored: an authenticator app pending then confirmed, each TOTP step accepted once (also
// under concurrency), recovery codes replaced and spent once, a login's second step failed, spent and
// expired, the factor summary, and the second factor a session showed.
import { beforeEach, describe, expect, test } from "bun:test";
import type { Store, UserRecord } from "../../../src/db/store.ts";
import { clock, event, newSession, newUser, tick } from "./fixtures.ts";
import { failure } from "../../support/failure.ts";

export function mfaContract(use: () => Store): void {
  describe("second factors", () => {
    let store: Store;
    let ann: UserRecord;
    beforeEach(async () => {
      store = use();
      ann = await store.users.create(newUser("ann"));
    });

    const pending = (user: UserRecord) =>
      store.mfa.startTotp({ userId: user.id, secretSealed: `sealed-${Bun.randomUUIDv7()}`, createdAt: tick() });
    const confirmed = async (user: UserRecord, step = 100, codes = ["c1", "c2", "c3"]) => {
      expect(await pending(user)).toBe(true);
      const { secretSealed } = (await store.mfa.totp(user.id))!;
      expect(await store.mfa.confirmTotp(user.id, secretSealed, step, tick(), codes, event("mfa.totp_enrolled"))).toBe(
        true,
      );
    };

    test("an enrolment is pending until confirmed; a new one replaces it, but never a confirmed one", async () => {
      expect(await store.mfa.totp(ann.id)).toBeNull();
      expect(await pending(ann)).toBe(true);
      const first = await store.mfa.totp(ann.id);
      expect(first).toMatchObject({ userId: ann.id, confirmedAt: null, lastStep: null });
      expect(await pending(ann)).toBe(true);
      expect((await store.mfa.totp(ann.id))!.secretSealed).not.toBe(first!.secretSealed);
      expect(await store.mfa.factors(ann.id)).toEqual({
        totp: { confirmedAt: null, pending: true },
        passkeys: 0,
        recoveryCodesLeft: 0,
      });
      const at = tick();
      const second = (await store.mfa.totp(ann.id))!.secretSealed;
      // Only the enrolment pending now, by its sealed secret: the one it replaced confirms nothing.
      expect(await store.mfa.confirmTotp(ann.id, first!.secretSealed, 7, at, ["a"], event("mfa.totp_enrolled"))).toBe(
        false,
      );
      expect(await store.mfa.totp(ann.id)).toMatchObject({ confirmedAt: null });
      expect(await store.mfa.confirmTotp(ann.id, second, 7, at, ["a", "b"], event("mfa.totp_enrolled"))).toBe(true);
      expect(await store.mfa.totp(ann.id)).toMatchObject({ confirmedAt: at, lastStep: 7 });
      expect(await store.mfa.confirmTotp(ann.id, second, 8, tick(), ["x"], event("mfa.totp_enrolled"))).toBe(false);
      expect(await pending(ann)).toBe(false);
      expect(await store.mfa.factors(ann.id)).toEqual({
        totp: { confirmedAt: at, pending: false },
        passkeys: 0,
        recoveryCodesLeft: 2,
      });
      expect(await store.audit.list({ action: "mfa.totp_enrolled", limit: 5 })).toHaveLength(1);
    });

    test("a step is accepted only when newer than every accepted one; concurrent ones, exactly one", async () => {
      expect(await store.mfa.acceptStep(ann.id, 5)).toBe(false);
      await confirmed(ann, 100);
      expect(await store.mfa.acceptStep(ann.id, 100)).toBe(false);
      expect(await store.mfa.acceptStep(ann.id, 99)).toBe(false);
      expect(await store.mfa.acceptStep(ann.id, 101)).toBe(true);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.mfa.acceptStep(ann.id, 102)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.mfa.totp(ann.id))!.lastStep).toBe(102);
    });

    test("recovery codes: each spent once (concurrently too), counted, and all replaced at once", async () => {
      await confirmed(ann, 1, ["c1", "c2", "c3"]);
      expect(await store.mfa.spendRecoveryCode(ann.id, "c1", tick())).toBe(2);
      expect(await store.mfa.spendRecoveryCode(ann.id, "c1", tick())).toBeNull();
      expect(await store.mfa.spendRecoveryCode(ann.id, "nope", tick())).toBeNull();
      const bob = await store.users.create(newUser("bob"));
      expect(await store.mfa.spendRecoveryCode(bob.id, "c2", tick())).toBeNull();
      const spent = await Promise.all([1, 2, 3, 4].map(() => store.mfa.spendRecoveryCode(ann.id, "c2", tick())));
      expect(spent.filter((left) => left !== null)).toEqual([1]);
      expect(await store.mfa.recoveryCodesLeft(ann.id)).toBe(1);
      expect(
        await store.mfa.replaceRecoveryCodes(ann.id, ["n1", "n2"], tick(), event("mfa.recovery_codes_renewed")),
      ).toBe(true);
      expect(await store.mfa.spendRecoveryCode(ann.id, "c3", tick())).toBeNull();
      expect(await store.mfa.recoveryCodesLeft(ann.id)).toBe(2);
      expect((await store.mfa.recoveryCodePage(10)).map((row) => row.digest).sort()).toEqual(["n1", "n2"]);
    });

    test("removing the app takes the recovery codes with it when no passkey is left", async () => {
      expect(await store.mfa.removeTotp(ann.id, event("mfa.totp_removed"))).toBe(false);
      await confirmed(ann);
      expect(await store.mfa.removeTotp(ann.id, event("mfa.totp_removed"))).toBe(true);
      expect(await store.mfa.totp(ann.id)).toBeNull();
      expect(await store.mfa.factors(ann.id)).toEqual({ totp: null, passkeys: 0, recoveryCodesLeft: 0 });
      expect(await store.audit.list({ action: "mfa.totp_removed", limit: 5 })).toHaveLength(1);
    });

    test("a second step: failures counted until the fifth spends it; spent once; not after it expires", async () => {
      const at = tick();
      const challenge = (digest: string, expiresAt = new Date(clock.ms + 300_000).toISOString()) =>
        store.mfa.createChallenge({
          digest,
          userId: ann.id,
          mode: "cookie",
          firstFactor: "pwd",
          webauthnChallenge: null,
          createdAt: at,
          expiresAt,
        });
      expect(await challenge("d1")).toBe(true);
      expect(await store.mfa.challenge("d1")).toMatchObject({
        userId: ann.id,
        mode: "cookie",
        failures: 0,
        usedAt: null,
      });
      for (let i = 1; i <= 5; i++) expect(await store.mfa.failChallenge("d1")).toBe(i);
      expect(await store.mfa.failChallenge("d1")).toBeNull();
      expect(await store.mfa.spendChallenge("d1", tick())).toBe(false);

      expect(await challenge("d2")).toBe(true);
      const spends = await Promise.all([1, 2, 3].map(() => store.mfa.spendChallenge("d2", tick())));
      expect(spends.filter(Boolean)).toHaveLength(1);
      expect(await store.mfa.failChallenge("d2")).toBeNull();

      expect(await challenge("d3", tick())).toBe(true);
      expect(await store.mfa.spendChallenge("d3", tick())).toBe(false);
      // Only the expired one goes; the others live their 5 minutes, spent or not.
      expect(await store.mfa.pruneChallenges(tick(), 10)).toBe(1);
      expect(await store.mfa.challenge("d2")).not.toBeNull();
      expect(await store.mfa.challenge("d3")).toBeNull();

      const ghost = newUser("ghost");
      expect(
        await store.mfa.createChallenge({
          digest: "d4",
          userId: ghost.id,
          mode: "json",
          firstFactor: "pwd",
          webauthnChallenge: null,
          createdAt: at,
          expiresAt: at,
        }),
      ).toBe(false);
    });

    test("a load carries the factors, and is rolled back when their counts differ from the source's", async () => {
      await confirmed(ann, 9, ["r1", "r2"]);
      const users = [(await store.users.findById(ann.id))!];
      const totp = await store.mfa.totpPage(10);
      const recoveryCodes = await store.mfa.recoveryCodePage(10);
      const once = async function* <T>(rows: T[]) {
        yield rows;
      };
      const data = () => ({
        users: once(users),
        categories: [],
        totp: once(totp),
        recoveryCodes: once(recoveryCodes),
      });
      const expect1 = { users: 1, categories: 0 };
      const refused = store.load(data(), {
        replace: true,
        expect: expect1,
        expectFactors: { totp: 1, recoveryCodes: 3, passkeys: 0 },
      });
      expect(await failure(refused)).toMatchObject({ message: expect.stringMatching(/second factors after loading/) });
      expect(await store.mfa.counts()).toEqual({ totp: 1, recoveryCodes: 2, passkeys: 0 });
      await store.load({ users: once(users), categories: [] }, { replace: true, expect: expect1 });
      expect(await store.mfa.counts()).toEqual({ totp: 0, recoveryCodes: 0, passkeys: 0 });
      await store.load(data(), {
        replace: true,
        expect: expect1,
        expectFactors: { totp: 1, recoveryCodes: 2, passkeys: 0 },
      });
      expect(await store.mfa.totpPage(10)).toEqual(totp);
      expect(await store.mfa.recoveryCodePage(10)).toEqual(recoveryCodes);
    });

    test("a session's amr and the second factor it showed", async () => {
      const session = newSession(ann.id, tick(), { amr: "pwd,otp", mfaAt: tick() });
      await store.sessions.start(session, { digest: `r-${session.id}`, expiresAt: session.expiresAt }, ann);
      expect(await store.mfa.sessionFactor(ann.id, session.id)).toEqual({ amr: "pwd,otp", mfaAt: session.mfaAt });
      const later = tick();
      expect(await store.mfa.markSession(ann.id, session.id, later)).toBe(true);
      expect(await store.mfa.sessionFactor(ann.id, session.id)).toEqual({ amr: "pwd,otp", mfaAt: later });
      const bob = await store.users.create(newUser("bob"));
      expect(await store.mfa.markSession(bob.id, session.id, later)).toBe(false);
      expect(await store.mfa.sessionFactor(bob.id, session.id)).toBeNull();
      expect((await store.sessions.list(ann.id, tick()))[0]).toMatchObject({ amr: "pwd,otp", mfaAt: later });
    });
  });
}
