// Sessions and refresh tokens: started, rotated once however many race, listed, ended, pruned, paged.
import { beforeEach, describe, expect, test } from "bun:test";
import { type SessionRecord, type Store, type UserRecord } from "../../../src/db/store.ts";
import { newUser, newCategory, event, tick, clock } from "./fixtures.ts";

export function sessionsContract(use: () => Store): void {
  describe("sessions", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const day = 86_400_000;
    /** A session of the user, started at the clock's next tick, with its first refresh token. */
    async function started(user: UserRecord, overrides: Partial<SessionRecord> = {}) {
      const at = tick();
      const session: SessionRecord = {
        id: Bun.randomUUIDv7(),
        userId: user.id,
        createdAt: at,
        lastUsedAt: at,
        expiresAt: new Date(Date.parse(at) + 30 * day).toISOString(),
        userAgent: "test/1.0",
        clientAddress: "192.0.2.1",
        amr: "pwd",
        mfaAt: null,
        ...overrides,
      };
      const refresh = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: session.expiresAt };
      expect(await store.sessions.start(session, refresh, { tokenVersion: user.tokenVersion })).toEqual(session);
      return { session, refresh };
    }
    const rotation = (at: string, sealed = "sealed") => ({
      at,
      successor: {
        digest: `digest-${Bun.randomUUIDv7()}`,
        expiresAt: new Date(Date.parse(at) + 30 * day).toISOString(),
      },
      sealed,
    });

    test("start stores the session and its refresh token; findRefresh finds both with the user, by digest", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      expect(await store.sessions.findRefresh(refresh.digest)).toEqual({
        token: { ...refresh, sessionId: session.id, rotatedAt: null, successor: null },
        session,
        user: ann,
      });
      expect(await store.sessions.findRefresh("digest-unknown")).toBeNull();
    });

    test("many starts, rotations and plain writes at once all land, none inside another's transaction", async () => {
      const ann = await store.users.create(newUser("ann"));
      const first = await started(ann);
      const work = Array.from({ length: 20 }, (_, i) => [
        started(ann),
        store.users.create(newUser(`user${i}`)),
        store.categories.create(newCategory(`Category ${i}`)),
      ]).flat();
      const rotations = Array.from({ length: 5 }, () => store.sessions.rotate(first.refresh.digest, rotation(tick())));
      await Promise.all(work);
      expect((await Promise.all(rotations)).filter(Boolean)).toHaveLength(1);
      expect(await store.counts()).toEqual({ users: 21, categories: 20 });
      expect(await store.sessions.list(ann.id, new Date(clock.ms).toISOString())).toHaveLength(21);
    });

    test("rotations racing the session's end, the user's deletion or a password change: each lands or finds it gone, never an error", async () => {
      for (let round = 0; round < 30; round++) {
        const user = await store.users.create(newUser(`racer${round}`));
        const { session, refresh } = await started(user);
        const renewed = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: session.expiresAt };
        const rivals = [
          () => store.sessions.end(user.id, { only: session.id }),
          () => store.users.delete(user.id),
          () => store.users.setPassword(user.id, "h2", tick(), 0, { sessionId: session.id, refresh: renewed }),
        ];
        const at = tick();
        const outcomes = await Promise.allSettled([
          store.sessions.rotate(refresh.digest, rotation(at)),
          rivals[round % rivals.length]!(),
          store.sessions.rotate(refresh.digest, rotation(at)),
        ]);
        expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
      }
    });

    test("start is null and stores nothing for a user who is gone, disabled, or past the token version", async () => {
      const ghost = { ...(await store.users.create(newUser("ghost"))) };
      await store.users.delete(ghost.id);
      const session = (user: UserRecord): SessionRecord => ({
        id: Bun.randomUUIDv7(),
        userId: user.id,
        createdAt: tick(),
        lastUsedAt: tick(),
        expiresAt: new Date(clock.ms + 30 * day).toISOString(),
        userAgent: null,
        clientAddress: null,
        amr: "pwd",
        mfaAt: null,
      });
      const refresh = () => ({
        digest: `digest-${Bun.randomUUIDv7()}`,
        expiresAt: new Date(clock.ms + day).toISOString(),
      });
      expect(await store.sessions.start(session(ghost), refresh(), { tokenVersion: 0 })).toBeNull();
      const ann = await store.users.create(newUser("ann"));
      expect(await store.sessions.start(session(ann), refresh(), { tokenVersion: 1 })).toBeNull();
      await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(await store.sessions.start(session(ann), refresh(), { tokenVersion: 1 })).toBeNull();
      expect(await store.sessions.page(10)).toEqual({ sessions: [], refreshTokens: [] });
    });

    test("rotate lands once, however many race, on the current token only; the session moves on", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      // Each at its own time: a loser that moved the session would show in its lastUsedAt.
      const attempts = Array.from({ length: 8 }, (_, i) => rotation(tick(), `sealed-${i}`));
      const landed = await Promise.all(attempts.map((r) => store.sessions.rotate(refresh.digest, r)));
      expect(landed.filter(Boolean)).toHaveLength(1);
      const winner = attempts[landed.indexOf(true)]!;
      const { at } = winner;
      const spent = await store.sessions.findRefresh(refresh.digest);
      expect(spent?.token).toMatchObject({ rotatedAt: at, successor: winner.sealed });
      expect(spent?.session).toEqual({ ...session, lastUsedAt: at, expiresAt: winner.successor.expiresAt });
      expect((await store.sessions.findRefresh(winner.successor.digest))?.token).toEqual({
        ...winner.successor,
        sessionId: session.id,
        rotatedAt: null,
        successor: null,
      });
      for (const loser of attempts.filter((r) => r !== winner)) {
        expect(await store.sessions.findRefresh(loser.successor.digest)).toBeNull();
      }
      expect(await store.sessions.rotate(refresh.digest, rotation(tick()))).toBe(false);
      expect(await store.sessions.rotate("digest-unknown", rotation(tick()))).toBe(false);
    });

    test("list gives the user's unexpired sessions, newest first", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const first = (await started(ann)).session;
      const second = (await started(ann)).session;
      const expired = (await started(ann, { expiresAt: new Date(clock.ms - 1000).toISOString() })).session;
      await started(bob);
      const now = new Date(clock.ms).toISOString();
      expect(await store.sessions.list(ann.id, now)).toEqual([second, first]);
      expect(await store.sessions.list(Bun.randomUUIDv7(), now)).toEqual([]);
      expect(await store.sessions.list("not-an-id", now)).toEqual([]);
      expect(expired.id).toBeDefined();
    });

    test("end ends the sessions in scope, with their refresh tokens, and only the user's own", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const a1 = await started(ann);
      const a2 = await started(ann);
      const a3 = await started(ann);
      const b1 = await started(bob);
      const now = new Date(clock.ms).toISOString();
      expect(await store.sessions.end(bob.id, { only: a1.session.id })).toBe(0);
      expect(await store.sessions.end(ann.id, { only: "not-an-id" })).toBe(0);
      expect(await store.sessions.end(ann.id, { only: a1.session.id })).toBe(1);
      expect(await store.sessions.findRefresh(a1.refresh.digest)).toBeNull();
      expect(await store.sessions.end(ann.id, { except: a3.session.id })).toBe(1);
      expect((await store.sessions.list(ann.id, now)).map((x) => x.id)).toEqual([a3.session.id]);
      expect(await store.sessions.findRefresh(a2.refresh.digest)).toBeNull();
      expect(await store.sessions.end(ann.id, "all")).toBe(1);
      expect(await store.sessions.list(ann.id, now)).toEqual([]);
      expect(await store.sessions.list(bob.id, now)).toEqual([b1.session]);
    });

    test("deleting the user ends their sessions", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { refresh } = await started(ann);
      await store.users.delete(ann.id);
      expect(await store.sessions.findRefresh(refresh.digest)).toBeNull();
      expect(await store.sessions.page(10)).toEqual({ sessions: [], refreshTokens: [] });
    });

    test("a session's access tokens are revoked once it ends: tokenHolder reads the session", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session } = await started(ann);
      const other = await started(ann);
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.revoked).toBe(false);
      await store.sessions.end(ann.id, { only: session.id });
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", other.session.id))?.revoked).toBe(false);
      // Another user's session, an unknown one, or no id at all: revoked.
      const bob = await store.users.create(newUser("bob"));
      expect((await store.tokenHolder(bob.id, "jti", other.session.id))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", Bun.randomUUIDv7()))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", "not-an-id"))?.revoked).toBe(true);
      // A token with a session is not looked up by its jti, nor one without by a session.
      await store.revocations.revoke("jti", new Date(clock.ms + day).toISOString());
      expect((await store.tokenHolder(ann.id, "jti", other.session.id))?.revoked).toBe(false);
      expect((await store.tokenHolder(ann.id, "jti"))?.revoked).toBe(true);
    });

    test("tokenHolder carries the session's expires_at, as the last rotation set it; none without a live session", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      const holder = await store.tokenHolder(ann.id, "jti", session.id);
      expect(holder).toEqual({ user: ann, revoked: false, expiresAt: session.expiresAt });
      const turn = rotation(tick());
      expect(await store.sessions.rotate(refresh.digest, turn)).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.expiresAt).toBe(turn.successor.expiresAt);
      // A token from before sessions has no session to end it; an ended session has no expiry left.
      expect((await store.tokenHolder(ann.id, "jti"))?.expiresAt).toBeNull();
      await store.sessions.end(ann.id, { only: session.id });
      expect(await store.tokenHolder(ann.id, "jti", session.id)).toEqual({ user: ann, revoked: true, expiresAt: null });
    });

    test("setPassword with keep ends every other session and renews the kept one's refresh tokens, in one change", async () => {
      const ann = await store.users.create(newUser("ann"));
      const kept = await started(ann);
      const other = await started(ann);
      const renewed = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: new Date(clock.ms + 7 * day).toISOString() };
      const at = tick();
      const changed = await store.users.setPassword(ann.id, "h2", at, 0, {
        sessionId: kept.session.id,
        refresh: renewed,
      });
      expect(changed?.tokenVersion).toBe(1);
      const now = new Date(clock.ms).toISOString();
      expect(await store.sessions.list(ann.id, now)).toEqual([
        { ...kept.session, lastUsedAt: at, expiresAt: renewed.expiresAt },
      ]);
      expect(await store.sessions.findRefresh(kept.refresh.digest)).toBeNull();
      expect(await store.sessions.findRefresh(other.refresh.digest)).toBeNull();
      expect((await store.sessions.findRefresh(renewed.digest))?.session.id).toBe(kept.session.id);

      // A stale version changes nothing, sessions included; a kept session that is gone, likewise.
      const again = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: renewed.expiresAt };
      expect(
        await store.users.setPassword(ann.id, "h3", tick(), 0, { sessionId: kept.session.id, refresh: again }),
      ).toBeNull();
      expect(
        await store.users.setPassword(ann.id, "h3", tick(), 1, { sessionId: other.session.id, refresh: again }),
      ).toBeNull();
      expect((await store.users.findById(ann.id))?.passwordHash).toBe("h2");
      expect(await store.sessions.findRefresh(again.digest)).toBeNull();
      expect((await store.sessions.findRefresh(renewed.digest))?.session.id).toBe(kept.session.id);

      // Without keep, every session ends.
      expect((await store.users.setPassword(ann.id, "h4", tick(), 1))?.tokenVersion).toBe(2);
      expect(await store.sessions.list(ann.id, now)).toEqual([]);
    });

    test("prune deletes expired sessions and expired refresh tokens, at most `limit` rows at a time", async () => {
      const ann = await store.users.create(newUser("ann"));
      const past = new Date(clock.ms - 1000).toISOString();
      const live = await started(ann);
      for (let i = 0; i < 3; i++) await started(ann, { expiresAt: past });
      // A spent refresh token of the live session, expired.
      const spent = rotation(tick());
      await store.sessions.rotate(live.refresh.digest, spent);
      await store.sessions.start(
        { ...live.session, id: Bun.randomUUIDv7() },
        { digest: "digest-short-lived", expiresAt: past },
        { tokenVersion: 0 },
      );
      const now = new Date(clock.ms).toISOString();
      expect(await store.sessions.prune(now, 2)).toBe(2);
      expect(await store.sessions.prune(now, 10)).toBe(2);
      expect(await store.sessions.prune(now, 10)).toBe(0);
      expect(await store.sessions.findRefresh("digest-short-lived")).toBeNull();
      expect(await store.sessions.findRefresh(spent.successor.digest)).not.toBeNull();
      expect((await store.sessions.list(ann.id, now)).length).toBe(2);
    });

    test("page gives sessions in id order with their refresh tokens; load puts them back exactly", async () => {
      const ann = await store.users.create(newUser("ann"));
      const a = await started(ann);
      const b = await started(ann);
      await store.sessions.rotate(a.refresh.digest, rotation(tick()));
      const first = await store.sessions.page(1);
      expect(first.sessions).toEqual([{ ...a.session, lastUsedAt: expect.any(String), expiresAt: expect.any(String) }]);
      expect(first.refreshTokens).toHaveLength(2);
      const second = await store.sessions.page(1, a.session.id);
      expect(second.sessions).toEqual([b.session]);
      expect(await store.sessions.page(1, b.session.id)).toEqual({ sessions: [], refreshTokens: [] });

      const users = [await store.users.findById(ann.id)];
      async function* all() {
        yield first;
        yield second;
      }
      await store.load(
        {
          users: (async function* () {
            yield users as UserRecord[];
          })(),
          categories: [],
          sessions: all(),
        },
        {
          replace: true,
          expect: { users: 1, categories: 0 },
        },
      );
      expect(await store.sessions.page(10)).toEqual({
        sessions: [...first.sessions, ...second.sessions],
        refreshTokens: expect.arrayContaining([...first.refreshTokens, ...second.refreshTokens]),
      });
    });
  });
}
