// Identities at OpenID providers and the one-time codes of sign-ins by code: an issuer and subject are one
// account's, and an account has one identity per provider; unlinking never takes an account's last way in
// (no password, no passkey, no other identity); a code is taken once, unexpired, by one of concurrent takes.
import { beforeEach, describe, expect, test } from "bun:test";
import type { IdentityRecord } from "../../../src/db/identities.ts";
import { NO_PASSWORD } from "../../../src/db/records.ts";
import type { Store, UserRecord } from "../../../src/db/store.ts";
import { clock, event, newUser, tick } from "./fixtures.ts";

function identity(userId: string, overrides: Partial<IdentityRecord> = {}): IdentityRecord {
  const at = tick();
  return {
    id: Bun.randomUUIDv7(),
    userId,
    provider: "corp",
    issuer: "https://idp.example.test",
    subject: `sub-${Bun.randomUUIDv7()}`,
    email: "someone@example.test",
    createdAt: at,
    lastUsedAt: at,
    ...overrides,
  };
}

export function identitiesContract(use: () => Store): void {
  describe("identities", () => {
    let ann: UserRecord;
    let bob: UserRecord;
    beforeEach(async () => {
      ann = await use().users.create(newUser("ann"));
      bob = await use().users.create(newUser("bob"));
    });

    test("linked with its event, found by issuer and subject, listed oldest first", async () => {
      const { identities, audit } = use();
      const corp = identity(ann.id);
      const other = identity(ann.id, { provider: "other", issuer: "https://other.example.test", email: null });
      expect(await identities.link(corp, event("identity.linked"))).toEqual(corp);
      expect(await identities.link(other, event("identity.linked"))).toEqual(other);
      expect(await identities.find(corp.issuer, corp.subject)).toEqual(corp);
      expect(await identities.find(corp.issuer, "nobody")).toBeNull();
      expect(await identities.list(ann.id)).toEqual([corp, other]);
      expect(await identities.list(bob.id)).toEqual([]);
      expect(await identities.list("not-an-id")).toEqual([]);
      expect(await audit.list({ action: "identity.linked", limit: 10 })).toHaveLength(2);
    });

    test("taken: an issuer and subject linked anywhere, or a second identity at one provider; nothing written", async () => {
      const { identities, audit } = use();
      const corp = identity(ann.id);
      await identities.link(corp, event("identity.linked"));
      const same = identity(bob.id, { issuer: corp.issuer, subject: corp.subject });
      expect(await identities.link(same, event("identity.linked"))).toBe("taken");
      expect(await identities.link(identity(ann.id), event("identity.linked"))).toBe("taken");
      expect(await identities.link(identity(Bun.randomUUIDv7()), event("identity.linked"))).toBeNull();
      expect(await identities.list(bob.id)).toEqual([]);
      expect(await audit.list({ action: "identity.linked", limit: 10 })).toHaveLength(1);
    });

    test("an account made with its identity has it; a use records when and the address given", async () => {
      const { users, identities } = use();
      const user = newUser("carol", { passwordHash: NO_PASSWORD });
      const linked = identity(user.id);
      await users.create(user, event("user.created"), undefined, linked);
      expect(await identities.list(user.id)).toEqual([linked]);
      const at = tick();
      await identities.recordUse(linked.id, "new@example.test", at);
      expect(await identities.find(linked.issuer, linked.subject)).toEqual({
        ...linked,
        email: "new@example.test",
        lastUsedAt: at,
      });
    });

    test("unlinking: never the last way in; with a password, another identity or a passkey it goes", async () => {
      const { users, identities, passkeys, audit } = use();
      const carol = newUser("carol", { passwordHash: NO_PASSWORD });
      await users.create(carol, event("user.created"), undefined, identity(carol.id));
      expect(await identities.unlink(carol.id, "corp", event("identity.unlinked"))).toBe("last");
      expect(await identities.unlink(carol.id, "elsewhere", event("identity.unlinked"))).toBe(false);
      await identities.link(identity(carol.id, { provider: "other" }), event("identity.linked"));
      expect(await identities.unlink(carol.id, "corp", event("identity.unlinked"))).toBe(true);
      expect(await identities.unlink(carol.id, "other", event("identity.unlinked"))).toBe("last");
      await passkeys.add(
        {
          id: Bun.randomUUIDv7(),
          userId: carol.id,
          credentialId: `cred-${Bun.randomUUIDv7()}`,
          publicKey: "cose-key",
          counter: 0,
          transports: [],
          deviceType: "multiDevice",
          backedUp: true,
          name: "Phone",
          createdAt: tick(),
          lastUsedAt: null,
        },
        event("passkey.added"),
      );
      expect(await identities.unlink(carol.id, "other", event("identity.unlinked"))).toBe(true);
      // Ann has a password: her only identity goes.
      await identities.link(identity(ann.id), event("identity.linked"));
      expect(await identities.unlink(ann.id, "corp", event("identity.unlinked"))).toBe(true);
      expect(await audit.list({ action: "identity.unlinked", limit: 10 })).toHaveLength(3);
    });

    test("the last two identities unlinked at once: one goes, the other stays", async () => {
      const { users, identities } = use();
      for (let round = 0; round < 4; round++) {
        const user = newUser(`race${round}`, { passwordHash: NO_PASSWORD });
        await users.create(user, event("user.created"), undefined, identity(user.id));
        await identities.link(identity(user.id, { provider: "other" }), event("identity.linked"));
        const results = await Promise.all(
          ["corp", "other"].map((provider) => identities.unlink(user.id, provider, event("identity.unlinked"))),
        );
        expect(results.toSorted()).toEqual(["last", true]);
        expect(await identities.list(user.id)).toHaveLength(1);
      }
    });

    test("a code is taken once while unexpired, by one of concurrent takes; expired ones are pruned", async () => {
      const { identities } = use();
      const iso = (ms: number) => new Date(ms).toISOString();
      const at = clock.ms;
      const code = (digest: string) =>
        identities.issueCode({
          digest,
          userId: ann.id,
          amr: ["ext"],
          createdAt: iso(at),
          expiresAt: iso(at + 60_000),
        });
      await code("raced");
      const takes = await Promise.all([1, 2, 3].map(() => identities.takeCode("raced", iso(at + 1000))));
      expect(takes.filter((taken) => taken !== null)).toEqual([
        { digest: "raced", userId: ann.id, amr: ["ext"], createdAt: iso(at), expiresAt: iso(at + 60_000) },
      ]);
      await code("expired");
      expect(await identities.takeCode("expired", iso(at + 60_000))).toBeNull();
      expect(await identities.takeCode("unknown", iso(at))).toBeNull();
      expect(await identities.pruneCodes(iso(at + 59_000), 10)).toBe(0);
      expect(await identities.pruneCodes(iso(at + 61_000), 10)).toBe(2);
    });

    test("for svc copy: counted, and paged in id order", async () => {
      const { identities } = use();
      const made = [identity(ann.id), identity(bob.id), identity(ann.id, { provider: "other" })];
      for (const one of made) await identities.link(one, event("identity.linked"));
      expect(await identities.count()).toBe(3);
      const sorted = made.toSorted((a, b) => a.id.localeCompare(b.id));
      const firstPage = await identities.page(2);
      expect(firstPage).toEqual(sorted.slice(0, 2));
      expect(await identities.page(2, firstPage[1]!.id)).toEqual(sorted.slice(2));
    });
  });
}
