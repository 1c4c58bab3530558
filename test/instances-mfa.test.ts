// Second factors across two instances of svc on one PostgreSQL database, each with its own pool: an
// authenticator code is good once on all of them (RFC 6238 §5.2), and a step-up on one counts on the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { ManualClock } from "./backup-clock.ts";
import { expectProblem, testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable, postgresConfig, type TestDatabase } from "./postgres.ts";

const available = await postgresAvailable();
const MFA = "/svc-api/v1/auth/mfa";

describe.skipIf(!available)("second factors on two instances", () => {
  let database: TestDatabase;
  let stores: VersionedStore[] = [];
  let a: Awaited<ReturnType<typeof testApp>>;
  let b: Awaited<ReturnType<typeof testApp>>;
  // One clock for both, as two boxes kept by NTP.
  const clock = new ManualClock(Date.parse("2026-11-26T12:00:10Z"));
  beforeAll(async () => {
    database = await createTestDatabase("instances_mfa");
    stores = await Promise.all([1, 2].map(() => openPostgresStore(postgresConfig(database.url))));
    [a, b] = [await testApp({ on: stores[0], clock }), await testApp({ on: stores[1], clock })];
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await database?.drop();
  });

  async function enrolledOnA(name: string) {
    const user = await a.signUp(name);
    const enrolment = await a.call("POST", `${MFA}/totp`, { token: user.token });
    const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const confirmed = await a.call("POST", `${MFA}/totp/confirm`, {
      token: user.token,
      body: { code: totp.generate({ timestamp: clock.now() }) },
    });
    expect(confirmed.status).toBe(200);
    clock.pass(30_000);
    return { ...user, totp };
  }

  const firstStep = async (app: typeof a, username: string, password: string) => {
    const reply = await app.call("POST", "/svc-api/v1/auth/login", { body: { username, password } });
    expect(reply.body.mfa_required).toBe(true);
    return reply.body.mfa_token as string;
  };

  test("a code used on one instance is refused on the other", async () => {
    const ann = await enrolledOnA("ann");
    const code = ann.totp.generate({ timestamp: clock.now() });
    // The first step on A, the second on B: one database, one login.
    const viaA = await firstStep(a, "ann", ann.password);
    expect((await b.call("POST", `${MFA}/verify`, { body: { mfa_token: viaA, code } })).status).toBe(200);
    const viaB = await firstStep(b, "ann", ann.password);
    expectProblem(await a.call("POST", `${MFA}/verify`, { body: { mfa_token: viaB, code } }), 401, "invalid_mfa_code");
  });

  test("one code sent to both instances at once: exactly one login", async () => {
    const bob = await enrolledOnA("bob");
    const code = bob.totp.generate({ timestamp: clock.now() });
    const tokens = [await firstStep(a, "bob", bob.password), await firstStep(b, "bob", bob.password)];
    const replies = await Promise.all(
      [a, b].map((app, i) => app.call("POST", `${MFA}/verify`, { body: { mfa_token: tokens[i], code } })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401]);
  });

  test("a step-up on one instance lets a password change through on the other", async () => {
    const cat = await enrolledOnA("cat");
    clock.pass(300_001);
    const change = () =>
      b.call("PUT", "/svc-api/v1/users/password", {
        token: cat.token,
        body: { current_password: cat.password, new_password: "another good passphrase" },
      });
    expectProblem(await change(), 403, "mfa_step_up_required");
    const code = cat.totp.generate({ timestamp: clock.now() });
    expect((await a.call("POST", `${MFA}/verify`, { token: cat.token, body: { code } })).status).toBe(200);
    expect((await change()).status).toBe(200);
  });
});
