// Password reset codes through the public surface: an administrator issues one, its owner redeems it.
import { describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import { canonicalResetCode, resetDigest } from "../../src/auth/reset-codes.ts";
import { blockAfter, expectProblem } from "../helpers.ts";
import { ADMIN, AUTH, CODE_FORMAT, adminApp } from "../support/admin.ts";

describe("password reset codes", () => {
  test("an admin issues a code (201, shown once); the user redeems it for a new password and a new session", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const issued = await app.issue(ann.user.id);
    expect(issued.status).toBe(201);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    expect(issued.body.reset_code).toMatch(CODE_FORMAT);
    const ttl = Date.parse(issued.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    // Read out loud and typed back: lower case, spaces for dashes.
    const typed = issued.body.reset_code.toLowerCase().replaceAll("-", " ");
    const redeemed = await app.redeem({ username: "ANN", reset_code: typed, new_password: "a brand new secret" });
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ token_type: "Bearer", user: { id: ann.user.id, email: "ann@example.com" } });
    expect((await app.me(redeemed.body.token)).status).toBe(200);
    // Every earlier session and token is over; the old password too.
    expectProblem(await app.me(ann.token), 401, "unauthorized");
    expectProblem(
      await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: ann.refresh } }),
      401,
      "invalid_refresh_token",
    );
    expectProblem(await app.login("ann", ann.password), 401, "invalid_credentials");
    expect((await app.login("ann", "a brand new secret")).status).toBe(200);
    // Used once: the second time it is invalid.
    expectProblem(
      await app.redeem({ username: "ann", reset_code: issued.body.reset_code, new_password: "yet another secret" }),
      400,
      "invalid_reset_code",
    );
    const admin = await app.call("GET", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token });
    expect(Date.parse(admin.body.last_login_at)).toBeGreaterThan(Date.parse(ann.user.created_at) - 1);
  });

  test("wrong, someone else's, replaced, expired, malformed, unknown user: 400 invalid_reset_code; nothing changes", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    const first = (await app.issue(ann.user.id)).body.reset_code;
    const second = (await app.issue(ann.user.id)).body.reset_code;
    const bobs = (await app.issue(bob.user.id)).body.reset_code;
    const tryCode = (username: string, reset_code: string) =>
      app.redeem({ username, reset_code, new_password: "a brand new secret" });
    expectProblem(await tryCode("ann", first), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", bobs), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", "0000-0000-0000-0000-0000-0000-0000-0000"), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", "not a code"), 400, "invalid_reset_code");
    expectProblem(await tryCode("nobody", second), 400, "invalid_reset_code");
    // One that expired a moment ago.
    const expired = "ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345-6789";
    await app.store.resets.issue(
      {
        digest: resetDigest(canonicalResetCode(expired)!),
        userId: bob.user.id,
        createdAt: new Date(Date.now() - 7200_000).toISOString(),
        expiresAt: new Date(Date.now() - 1000).toISOString(),
        issuedBy: null,
      },
      auditEvent("password_reset.issued", { origin: { address: "cli", requestId: null } }),
    );
    expectProblem(await tryCode("bob", expired), 400, "invalid_reset_code");
    expect((await app.me(ann.token)).status).toBe(200);
    expect((await app.me(bob.token)).status).toBe(200);
    expect((await tryCode("ann", second)).status).toBe(200);
  });

  test("bad bodies: 400 validation_failed naming the field (a weak new password among them), 415; the code is not spent", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const fields = async (body: unknown, expected: string[]) => {
      const reply = await app.call("POST", `${AUTH}/password-reset`, { body });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(expected);
    };
    await fields({ username: "ann", reset_code: code, new_password: "short" }, ["new_password"]);
    await fields({ username: "ann", reset_code: code, new_password: "password123" }, ["new_password"]);
    await fields({ username: "ann", reset_code: code }, ["new_password"]);
    await fields({ username: "ann", reset_code: code, new_password: "a brand new secret", admin: true }, ["admin"]);
    expectProblem(await app.call("POST", `${AUTH}/password-reset`, { raw: "x" }), 415, "unsupported_media_type");
    expect((await app.redeem({ username: "ann", reset_code: code, new_password: "a brand new secret" })).status).toBe(
      200,
    );
  });

  test("a disabled account's code: 403 account_disabled, and the code still works once enabled", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    await app.patch(ann.user.id, { status: "disabled" });
    const body = { username: "ann", reset_code: code, new_password: "a brand new secret" };
    expectProblem(await app.redeem(body), 403, "account_disabled");
    await app.patch(ann.user.id, { status: "active" });
    expect((await app.redeem(body)).status).toBe(200);
  });

  test("wrong codes are throttled like logins: 429 with Retry-After, and a right code then waits too", async () => {
    const app = await adminApp({
      loginThrottle: blockAfter(3),
    });
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const wrong = {
      username: "ann",
      reset_code: "0000-0000-0000-0000-0000-0000-0000-0000",
      new_password: "a brand new secret",
    };
    for (let i = 0; i < 3; i++) expectProblem(await app.redeem(wrong), 400, "invalid_reset_code");
    const blocked = await app.redeem(wrong);
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expectProblem(await app.redeem({ ...wrong, reset_code: code }), 429, "too_many_requests");
    // Logins have their own count: the account's owner can still log in.
    expect((await app.login("ann", ann.password)).status).toBe(200);
  });

  test("ten redemptions of one code at once: exactly one 200, nine 400 invalid_reset_code", async () => {
    // Attempts are reserved against the throttle while they run: room for all ten.
    const app = await adminApp({
      loginThrottle: {
        maxFailures: 20,
        backoffBaseMs: 1000,
        backoffMaxMs: 1000,
        clientMaxFailures: 100,
        clientWindowMs: 60_000,
      },
    });
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        app.redeem({ username: "ann", reset_code: code, new_password: `a brand new secret ${i}` }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectProblem(r, 400, "invalid_reset_code");
    const winner = replies.find((r) => r.status === 200)!;
    const sessions = await app.call("GET", `${AUTH}/sessions`, { token: winner.body.token });
    expect(sessions.body).toHaveLength(1);
  });

  test("issuing for an unknown or malformed id: 404 not_found", async () => {
    const app = await adminApp();
    expectProblem(await app.issue(Bun.randomUUIDv7()), 404, "not_found");
    expectProblem(await app.issue("nope"), 404, "not_found");
  });
});
