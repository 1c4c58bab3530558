// Changing one's address while svc sends mail (#55): PUT users answers 202 and mails a link to the new
// address; auth/email/confirm-change makes the change and tells the old address. Without mail the change
// is made at once (users.test.ts holds that behaviour; one check here too).
import { describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { linkTokenDigest, newLinkToken } from "../../src/users/link-tokens.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { expectProblem, promote, testApp, testConfig } from "../helpers.ts";
import { mailCount, mailedToken, mailOff } from "../support/mail-links.ts";

const USERS = "/svc-api/v1/users";
const CONFIRM = "/svc-api/v1/auth/email/confirm-change";

async function changeApp(config: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp(config);
  const ann = await app.signUp("ann");
  const change = (body: object, headers: Record<string, string> = {}) =>
    app.call("PUT", USERS, { token: ann.token, body, headers });
  const confirm = (token: unknown) => app.call("POST", CONFIRM, { body: { token } });
  const state = async () => {
    const user = (await app.store.users.findById(ann.user.id))!;
    return { email: user.email, username: user.username, emailVerifiedAt: user.emailVerifiedAt };
  };
  return { ...app, ann, change, confirm, state };
}

describe("e-mail change with mail on", () => {
  test("202 with the pending address; the new address's link makes the change, verified; the old one is told", async () => {
    const { store, ann, call, change, confirm, state } = await changeApp();
    const before = await state();
    const reply = await change({ email: "Ann@Example.ORG", current_password: ann.password });
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ pending_email: "ann@example.org", user: { email: "ann@example.com" } });
    expect(reply.headers.get("etag")).toBeNull();
    expect(await state()).toEqual(before);
    const { mail, link, token } = await mailedToken(store, "ann@example.org", "email_change");
    expect(mail.userId).toBe(ann.user.id);
    expect(link).toStartWith("http://localhost:8080/svc/account/confirm-email-change#token=");
    const confirmed = await confirm(token);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: ann.user.id, email: "ann@example.org" });
    const after = await state();
    expect(after.email).toBe("ann@example.org");
    expect(after.emailVerifiedAt).not.toBeNull();
    const [notice] = (await store.mail.list({ recipient: "ann@example.com", limit: 10 })).filter(
      (m) => m.kind === "email_changed",
    );
    expect((await openBodies(notice!, testConfig().jwt.secret))?.textBody).toContain("ann@example.org");
    // The session goes on, and the new address signs in.
    expect((await call("GET", `${USERS}/me`, { token: ann.token })).body.email).toBe("ann@example.org");
    const login = await call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann@example.org", password: ann.password },
    });
    expect(login.status).toBe(200);
    const actions = (await store.audit.list({ targetId: ann.user.id, limit: 20 })).map((e) => e.action);
    expect(actions).toContain("email_change.requested");
    expect(actions).toContain("email_change.confirmed");
    // Spent: a second confirmation is refused, and changes nothing.
    expectProblem(await confirm(token), 400, "invalid_mail_token");
  });

  test("a username in the same request changes at once; the 202's user shows it", async () => {
    const { change, ann, state } = await changeApp();
    const reply = await change({ username: "annie", email: "ann@example.org", current_password: ann.password });
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ pending_email: "ann@example.org", user: { username: "annie" } });
    expect(await state()).toMatchObject({ username: "annie", email: "ann@example.com" });
  });

  test("refused at once: a taken address (409), no or a wrong password; no mail, nothing changed", async () => {
    const { change, ann, signUp, state, store } = await changeApp();
    await signUp("bob");
    const before = await state();
    expectProblem(await change({ email: "bob@example.com", current_password: ann.password }), 409, "email_taken");
    expectProblem(await change({ email: "ann@example.org" }), 400, "validation_failed");
    expectProblem(
      await change({ email: "ann@example.org", current_password: "wrong horse battery" }),
      403,
      "current_password_mismatch",
    );
    expectProblem(await change({ email: "not an address", current_password: ann.password }), 400, "validation_failed");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "bob@example.com", "email_change")).toBe(0);
    expect(await mailCount(store, "ann@example.org")).toBe(0);
  });

  test("an address taken between the request and the confirmation: 409 email_taken, nothing changed", async () => {
    const { change, ann, call, confirm, state, store } = await changeApp();
    expect((await change({ email: "new@example.com", current_password: ann.password })).status).toBe(202);
    const { token } = await mailedToken(store, "new@example.com", "email_change");
    const created = await call("POST", `${USERS}/create`, {
      body: { username: "newcomer", email: "new@example.com", password: "correct horse battery" },
    });
    expect(created.status).toBe(201);
    const before = await state();
    expectProblem(await confirm(token), 409, "email_taken");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "ann@example.com", "email_changed")).toBe(0);
  });

  test("two changes asked for at once: one link stands, the other is 400 invalid_mail_token", async () => {
    const { change, ann, confirm, state, store } = await changeApp();
    const replies = await Promise.all(
      ["one@example.com", "two@example.com"].map((email) => change({ email, current_password: ann.password })),
    );
    expect(replies.map((r) => r.status)).toEqual([202, 202]);
    const tokens = await Promise.all(
      ["one@example.com", "two@example.com"].map(async (to) => (await mailedToken(store, to, "email_change")).token),
    );
    const answers = [];
    for (const token of tokens) answers.push((await confirm(token)).status);
    expect(answers.sort()).toEqual([200, 400]);
    expect(["one@example.com", "two@example.com"]).toContain((await state()).email);
  });

  test("unknown, replaced, other-kind, expired and malformed tokens: 400 with their code, nothing changed", async () => {
    const { change, ann, call, confirm, state, store } = await changeApp();
    const before = await state();
    const refused = async (token: unknown, status: number, code: string) => {
      expectProblem(await confirm(token), status, code);
      expect(await state()).toEqual(before);
    };
    await refused(newLinkToken(), 400, "invalid_mail_token");
    await refused("not-a-token", 400, "validation_failed");
    await refused(42, 400, "validation_failed");
    expect((await change({ email: "one@example.com", current_password: ann.password })).status).toBe(202);
    const first = await mailedToken(store, "one@example.com", "email_change");
    expect((await change({ email: "two@example.com", current_password: ann.password })).status).toBe(202);
    await refused(first.token, 400, "invalid_mail_token");
    // A reset's token is not a change's.
    expect(
      (await call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: ann.user.email } })).status,
    ).toBe(202);
    await refused((await mailedToken(store, ann.user.email, "password_reset")).token, 400, "invalid_mail_token");
    const old = newLinkToken();
    const at = new Date(Date.now() - 25 * 3600_000).toISOString();
    const record = { digest: linkTokenDigest(old), kind: "email_change" as const, userId: ann.user.id };
    const expiresAt = new Date(Date.now() - 3600_000).toISOString();
    const mail = (await store.mail.list({ recipient: "two@example.com", limit: 1 }))[0]!;
    const event = auditEvent("email_change.requested", { target: ann.user.id, origin: CLI_ORIGIN }, at);
    const written = await store.emailChanges.request(
      { ...record, email: "three@example.com", createdAt: at, expiresAt },
      { ...mail, id: Bun.randomUUIDv7(), messageId: `<${Bun.randomUUIDv7()}@localhost>` },
      event,
    );
    expect(written).toBe(true);
    await refused(old, 400, "mail_token_expired");
  });
});

describe("e-mail change requests are throttled", () => {
  test("per account: a third within a minute is 429 with Retry-After; no mail, nothing changed", async () => {
    const { change, ann, confirm, state, store } = await changeApp();
    for (const email of ["a@example.com", "b@example.com"])
      expect((await change({ email, current_password: ann.password })).status).toBe(202);
    const before = await state();
    const reply = await change({ username: "annie", email: "c@example.com", current_password: ann.password });
    expectProblem(reply, 429, "too_many_requests");
    const wait = Number(reply.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "c@example.com")).toBe(0);
    // The pending change stands: its link still works.
    expect((await confirm((await mailedToken(store, "b@example.com", "email_change")).token)).status).toBe(200);
  });

  test("per target address: another account asking for it within a minute is 429; no second mail", async () => {
    const { change, ann, call, signUp, store } = await changeApp();
    const bob = await signUp("bob");
    expect((await change({ email: "target@example.com", current_password: ann.password })).status).toBe(202);
    const before = await store.users.findById(bob.user.id);
    const reply = await call("PUT", USERS, {
      token: bob.token,
      body: { email: "TARGET@example.com", current_password: bob.password },
    });
    expectProblem(reply, 429, "too_many_requests");
    expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await store.users.findById(bob.user.id)).toEqual(before);
    expect(await mailCount(store, "target@example.com", "email_change")).toBe(1);
  });
});

describe("a new password cancels a pending e-mail change", () => {
  const NEW_PASSWORD = "a new staple battery";
  /** Ann asks to move to evil@example.com (as someone with her session and password could); the token of that link. */
  async function pending() {
    const app = await changeApp();
    expect((await app.change({ email: "evil@example.com", current_password: app.ann.password })).status).toBe(202);
    return { ...app, pendingToken: (await mailedToken(app.store, "evil@example.com", "email_change")).token };
  }
  const cancelled = async ({ confirm, state, store }: Awaited<ReturnType<typeof pending>>, token: string) => {
    const before = await state();
    expect(before.email).toBe("ann@example.com");
    expectProblem(await confirm(token), 400, "invalid_mail_token");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "ann@example.com", "email_changed")).toBe(0);
  };

  type Pending = Awaited<ReturnType<typeof pending>>;
  /** Ann asks for a reset link; its token. */
  const resetLink = async (app: Pending) => {
    expect(
      (await app.call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: "ann@example.com" } }))
        .status,
    ).toBe(202);
    return mailedToken(app.store, "ann@example.com", "password_reset");
  };
  /** The reset link's token is refused: 400 invalid_mail_token, nothing changed. */
  const resetRefused = async (app: Pending, token: string) => {
    const before = await app.store.users.findById(app.ann.user.id);
    expectProblem(
      await app.call("POST", "/svc-api/v1/auth/password-reset", {
        body: { token, new_password: "yet another staple" },
      }),
      400,
      "invalid_mail_token",
    );
    expect(await app.store.users.findById(app.ann.user.id)).toEqual(before);
  };

  test("a reset by mail: the change's link is then 400 invalid_mail_token, nothing changed", async () => {
    const app = await pending();
    const reset = await resetLink(app);
    const redeemed = await app.call("POST", "/svc-api/v1/auth/password-reset", {
      body: { token: reset.token, new_password: NEW_PASSWORD },
    });
    expect(redeemed.status).toBe(200);
    await cancelled(app, app.pendingToken);
  });

  test("PUT /users/password: the change's link and an outstanding reset link are then 400, nothing changed", async () => {
    const app = await pending();
    const reset = await resetLink(app);
    const changed = await app.call("PUT", `${USERS}/password`, {
      token: app.ann.token,
      body: { current_password: app.ann.password, new_password: NEW_PASSWORD },
    });
    expect(changed.status).toBe(200);
    await cancelled(app, app.pendingToken);
    await resetRefused(app, reset.token);
  });

  test("an administrator's reset code redeemed: the change's and a reset's links are then 400, nothing changed", async () => {
    const app = await pending();
    const root = await app.signUp("root");
    await promote(app.store, root.user.id);
    const reset = await resetLink(app);
    const issued = await app.call("POST", `/svc-api/v1/admin/users/${app.ann.user.id}/password-reset`, {
      token: root.token,
    });
    expect(issued.status).toBe(201);
    const redeemed = await app.call("POST", "/svc-api/v1/auth/password-reset", {
      body: { username: "ann", reset_code: issued.body.reset_code, new_password: NEW_PASSWORD },
    });
    expect(redeemed.status).toBe(200);
    await cancelled(app, app.pendingToken);
    await resetRefused(app, reset.token);
  });
});

describe("disabling an account cancels its pending e-mail change", () => {
  test("disabled then enabled again by an administrator: the change's link is 400 invalid_mail_token, nothing changed", async () => {
    const app = await changeApp();
    expect((await app.change({ email: "evil@example.com", current_password: app.ann.password })).status).toBe(202);
    const { token } = await mailedToken(app.store, "evil@example.com", "email_change");
    const root = await app.signUp("root");
    await promote(app.store, root.user.id);
    for (const status of ["disabled", "active"]) {
      const reply = await app.call("PATCH", `/svc-api/v1/admin/users/${app.ann.user.id}`, {
        token: root.token,
        body: { status },
      });
      expect(reply.status).toBe(200);
    }
    const before = await app.state();
    expectProblem(await app.confirm(token), 400, "invalid_mail_token");
    expect(await app.state()).toEqual(before);
    expect(before.email).toBe("ann@example.com");
  });
});

describe("e-mail change with mail off", () => {
  test("the change is made at once (200), as before; no mail", async () => {
    const { change, ann, store, confirm } = await changeApp({ config: mailOff() });
    const reply = await change({ email: "ann@example.org", current_password: ann.password });
    expect(reply.status).toBe(200);
    expect(reply.body.email).toBe("ann@example.org");
    expect(await mailCount(store, "ann@example.org")).toBe(0);
    expectProblem(await confirm(newLinkToken()), 400, "invalid_mail_token");
  });
});
