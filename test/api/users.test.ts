import { describe, expect, test } from "bun:test";
import { mailOff } from "../support/mail-links.ts";
import { expectProblem, testApp } from "../helpers.ts";
import type { VersionedStore } from "../../src/db/store.ts";

const CREATE = "/svc-api/v1/users/create";
const LOGIN = "/svc-api/v1/auth/login";

describe("POST /users/create", () => {
  test("creates a user: 201, Location, the user without secrets, e-mail in lower case", async () => {
    const { call } = await testApp();
    const reply = await call("POST", CREATE, {
      body: { username: "Ann.Lee", email: "Ann@Example.COM", password: "correct horse" },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: "Ann.Lee",
      email: "ann@example.com",
      email_verified: false,
      email_verified_at: null,
      role: "user",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: reply.body.created_at,
    });
    expect(reply.headers.get("location")).toBe(`/svc-api/v1/users/${reply.body.id}`);
    expect(reply.text).not.toContain("correct horse");
    expect(reply.text).not.toContain("argon2");
  });

  test.each([
    ["username", { username: "ab" }],
    ["username", { username: "a".repeat(33) }],
    ["username", { username: "has space" }],
    ["username", { username: "ann@home" }],
    ["email", { email: "no-at-sign.example.com" }],
    ["email", { email: "ann@nodot" }],
    ["email", { email: `${"a".repeat(250)}@example.com` }],
    ["password", { password: "short" }],
    ["password", { password: "p".repeat(129) }],
  ])("rejects an invalid %s with 400 validation_failed naming it", async (field, change) => {
    const { call } = await testApp();
    const body = { username: "ann", email: "ann@example.com", password: "correct horse", ...change };
    const reply = await call("POST", CREATE, { body });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors).toEqual([{ field, message: expect.any(String) }]);
  });

  test("reports every invalid field at once", async () => {
    const { call } = await testApp();
    const reply = await call("POST", CREATE, { body: { username: "x", email: "nope", password: "1" } });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors).toEqual([
      { field: "username", message: "must be 3-32 characters of letters, digits, _ . -" },
      { field: "email", message: "must be an e-mail address such as ann@example.com" },
      { field: "password", message: "must be 8-128 characters" },
    ]);
  });

  test("rejects a missing field and a wrong type with 400", async () => {
    const { call } = await testApp();
    expectProblem(
      await call("POST", CREATE, { body: { username: "ann", password: "correct horse" } }),
      400,
      "validation_failed",
    );
    const wrongType = await call("POST", CREATE, { body: { username: 7, email: "a@b.co", password: "correct horse" } });
    expectProblem(wrongType, 400, "validation_failed");
    expect(wrongType.body.errors[0].field).toBe("username");
  });

  test("counts password length in characters, after Unicode normalisation", async () => {
    const { call } = await testApp();
    const emoji = "🔑".repeat(8); // 8 characters, 16 UTF-16 units
    expect((await call("POST", CREATE, { body: { username: "ann", email: "a@b.co", password: emoji } })).status).toBe(
      201,
    );
    const login = await call("POST", LOGIN, { body: { username: "ann", password: emoji } });
    expect(login.status).toBe(200);
  });

  test("rejects a taken username without regard to case: 409 username_taken", async () => {
    const { call } = await testApp();
    await call("POST", CREATE, { body: { username: "ann", email: "ann@example.com", password: "correct horse" } });
    const reply = await call("POST", CREATE, {
      body: { username: "ANN", email: "other@example.com", password: "correct horse" },
    });
    expectProblem(reply, 409, "username_taken");
  });

  test("rejects a taken e-mail without regard to case: 409 email_taken", async () => {
    const { call } = await testApp();
    await call("POST", CREATE, { body: { username: "ann", email: "ann@example.com", password: "correct horse" } });
    const reply = await call("POST", CREATE, {
      body: { username: "bob", email: "ANN@example.com", password: "correct horse" },
    });
    expectProblem(reply, 409, "email_taken");
  });

  test("two simultaneous sign-ups with one username: one 201, one 409", async () => {
    const { call } = await testApp();
    const replies = await Promise.all(
      ["a", "b"].map((n) =>
        call("POST", CREATE, { body: { username: "same", email: `${n}@example.com`, password: "correct horse" } }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
  });
});

describe("POST /auth/login", () => {
  test("returns a bearer token for the username in any case, or for the e-mail", async () => {
    const { call } = await testApp();
    await call("POST", CREATE, { body: { username: "Ann", email: "ann@example.com", password: "correct horse" } });
    for (const username of ["Ann", "ann", "ANN", "ann@example.com", "Ann@Example.com"]) {
      const reply = await call("POST", LOGIN, { body: { username, password: "correct horse" } });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        token: expect.any(String),
        token_type: "Bearer",
        expires_in: 900,
        refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        refresh_expires_in: 30 * 86400,
        user: expect.objectContaining({ username: "Ann", email: "ann@example.com" }),
      });
      expect(reply.headers.get("cache-control")).toBe("no-store");
    }
  });

  test("answers an unknown user and a wrong password with the same 401 invalid_credentials", async () => {
    const { call } = await testApp();
    await call("POST", CREATE, { body: { username: "ann", email: "ann@example.com", password: "correct horse" } });
    const wrong = await call("POST", LOGIN, { body: { username: "ann", password: "wrong horse" } });
    const unknown = await call("POST", LOGIN, { body: { username: "nobody", password: "wrong horse" } });
    expectProblem(wrong, 401, "invalid_credentials");
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.body).toEqual(wrong.body);
    expect(unknown.headers.get("content-type")).toBe(wrong.headers.get("content-type"));
  });

  test("rejects a body without a password with 400", async () => {
    const { call } = await testApp();
    expectProblem(await call("POST", LOGIN, { body: { username: "ann" } }), 400, "validation_failed");
  });
});

describe("GET /users/all", () => {
  test("lists users oldest first, showing an e-mail only in the caller's own record", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    await signUp("bob");
    const reply = await call("GET", "/svc-api/v1/users/all", { token: ann.token });
    expect(reply.status).toBe(200);
    expect(reply.body.map((u: { username: string }) => u.username)).toEqual(["ann", "bob"]);
    expect(reply.body[0].email).toBe("ann@example.com");
    expect(reply.body[1]).not.toHaveProperty("email");
    expect(reply.headers.get("link")).toBeNull();
  });

  test("shows each caller the same page with only their own e-mail, wherever they stand in it", async () => {
    const { call, signUp } = await testApp();
    const people = [await signUp("ann"), await signUp("bob"), await signUp("cid")];
    for (const [index, person] of people.entries()) {
      const page = (await call("GET", "/svc-api/v1/users/all", { token: person.token })).body;
      expect(page.map((u: { username: string }) => u.username)).toEqual(["ann", "bob", "cid"]);
      expect(page.map((u: { email?: string }) => u.email ?? null)).toEqual(
        people.map((p, i) => (i === index ? p.user.email : null)),
      );
    }
    const anyone = await call("GET", "/svc-api/v1/users/all?limit=2&after=" + people[2]!.user.id, {
      token: people[0]!.token,
    });
    expect(anyone.body).toEqual([]);
  });

  test("a caller's repeated page is the same, and shows their new e-mail at once after they change it", async () => {
    const { call, signUp } = await testApp({ config: mailOff() });
    const ann = await signUp("ann");
    const bob = await signUp("bob");
    const first = await call("GET", "/svc-api/v1/users/all", { token: ann.token });
    expect((await call("GET", "/svc-api/v1/users/all", { token: ann.token })).text).toBe(first.text);
    const changed = await call("PUT", "/svc-api/v1/users/", {
      token: ann.token,
      body: { email: "ann@elsewhere.example", current_password: ann.password },
    });
    expect(changed.status).toBe(200);
    expect((await call("GET", "/svc-api/v1/users/all", { token: ann.token })).body[0].email).toBe(
      "ann@elsewhere.example",
    );
    const seenByBob = (await call("GET", "/svc-api/v1/users/all", { token: bob.token })).body;
    expect(seenByBob[0]).not.toHaveProperty("email");
    expect(seenByBob[1].email).toBe("bob@example.com");
  });

  test("pages with limit and after, announcing the next page in a Link header", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp("user0");
    for (let i = 1; i < 5; i++) await signUp(`user${i}`);
    const seen: string[] = [];
    let path: string | null = "/svc-api/v1/users/all?limit=2";
    while (path) {
      const reply = await call("GET", path, { token });
      expect(reply.status).toBe(200);
      seen.push(...reply.body.map((u: { username: string }) => u.username));
      const link = reply.headers.get("link");
      path = link ? (/<([^>]+)>; rel="next"/.exec(link)?.[1] ?? null) : null;
    }
    expect(seen).toEqual(["user0", "user1", "user2", "user3", "user4"]);
  });

  test.each([["limit=0"], ["limit=1001"], ["limit=abc"], ["limit=-1"], ["limit=1.5"], ["after=not-an-id"]])(
    "rejects ?%s with 400 validation_failed",
    async (query) => {
      const { call, signUp } = await testApp();
      const { token } = await signUp();
      expectProblem(await call("GET", `/svc-api/v1/users/all?${query}`, { token }), 400, "validation_failed");
    },
  );

  test("rejects an unknown query parameter with 400 naming it", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const reply = await call("GET", "/svc-api/v1/users/all?page=2", { token });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors).toEqual([{ field: "page", message: "is not a known field" }]);
  });

  test("requires a token: 401 unauthorized with WWW-Authenticate", async () => {
    const { call } = await testApp();
    const reply = await call("GET", "/svc-api/v1/users/all");
    expectProblem(reply, 401, "unauthorized");
    expect(reply.headers.get("www-authenticate")).toBe('Bearer realm="svc"');
  });
});

describe("who am I", () => {
  test("GET /users/me is the caller's own record, e-mail included; 401 without a token", async () => {
    const { call, signUp } = await testApp();
    const { token, user } = await signUp("ann");
    await signUp("bob");
    const me = await call("GET", "/svc-api/v1/users/me", { token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: user.id,
      username: "ann",
      email: "ann@example.com",
      email_verified: false,
      email_verified_at: null,
      role: "user",
      created_at: user.created_at,
      updated_at: user.updated_at,
    });
    expect((await call("GET", "/svc-api/v1/users/me/", { token })).body).toEqual(me.body);
    expectProblem(await call("GET", "/svc-api/v1/users/me"), 401, "unauthorized");
  });

  test("the login answer includes the user, so a client need not decode the token", async () => {
    const { call, signUp } = await testApp();
    const { user, password } = await signUp("ann");
    const login = await call("POST", LOGIN, { body: { username: "ANN@example.com", password } });
    expect(login.body).toEqual({
      token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      refresh_token: expect.any(String),
      refresh_expires_in: 30 * 86400,
      user: {
        id: user.id,
        username: "ann",
        email: "ann@example.com",
        email_verified: false,
        email_verified_at: null,
        role: "user",
        created_at: user.created_at,
        updated_at: user.updated_at,
      },
    });
  });
});

describe("GET /users/{user_id}", () => {
  test("shows one user, with the e-mail only to its owner", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const bob = await signUp("bob");
    const own = await call("GET", `/svc-api/v1/users/${ann.user.id}`, { token: ann.token });
    expect(own.status).toBe(200);
    expect(own.body).toEqual(ann.user);
    const other = await call("GET", `/svc-api/v1/users/${ann.user.id}`, { token: bob.token });
    expect(other.body).toEqual({
      ...ann.user,
      email: undefined,
      email_verified: undefined,
      email_verified_at: undefined,
      role: undefined,
    });
    expect(other.body).not.toHaveProperty("email");
    expect(other.body).not.toHaveProperty("role");
  });

  test("answers 404 not_found for an unknown id and for a malformed one", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    expectProblem(
      await call("GET", "/svc-api/v1/users/01937a6e-0000-7000-8000-000000000000", { token }),
      404,
      "not_found",
    );
    expectProblem(await call("GET", "/svc-api/v1/users/12345", { token }), 404, "not_found");
  });
});

describe("PUT /users/", () => {
  test("renames the caller, with or without a trailing slash", async () => {
    const { call, signUp } = await testApp();
    const { token, user } = await signUp("ann");
    const first = await call("PUT", "/svc-api/v1/users/", { token, body: { username: "anna" } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: user.id, username: "anna", email: user.email });
    const second = await call("PUT", "/svc-api/v1/users", { token, body: { username: "annie" } });
    expect(second.body.username).toBe("annie");
  });

  test("changing the e-mail needs current_password: 400 without it, 403 when wrong, 200 when right", async () => {
    const { call, signUp } = await testApp({ config: mailOff() });
    const { token, password } = await signUp("ann");
    const missing = await call("PUT", "/svc-api/v1/users/", { token, body: { email: "new@example.com" } });
    expectProblem(missing, 400, "validation_failed");
    expect(missing.body.errors).toEqual([{ field: "current_password", message: "is required" }]);
    const wrong = await call("PUT", "/svc-api/v1/users/", {
      token,
      body: { email: "new@example.com", current_password: "nope nope" },
    });
    expectProblem(wrong, 403, "current_password_mismatch");
    const right = await call("PUT", "/svc-api/v1/users/", {
      token,
      body: { email: "New@Example.com", current_password: password },
    });
    expect(right.status).toBe(200);
    expect(right.body.email).toBe("new@example.com");
  });

  test("rejects a taken username with 409 and changes nothing", async () => {
    const { call, signUp } = await testApp();
    await signUp("ann");
    const bob = await signUp("bob");
    expectProblem(
      await call("PUT", "/svc-api/v1/users/", { token: bob.token, body: { username: "ANN" } }),
      409,
      "username_taken",
    );
    const after = await call("GET", `/svc-api/v1/users/${bob.user.id}`, { token: bob.token });
    expect(after.body.username).toBe("bob");
  });

  test("rejects unknown fields and invalid values with 400", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const unknown = await call("PUT", "/svc-api/v1/users/", { token, body: { username: "okay", role: "admin" } });
    expectProblem(unknown, 400, "validation_failed");
    expect(unknown.body.detail).toContain("role");
    expectProblem(
      await call("PUT", "/svc-api/v1/users/", { token, body: { username: "no" } }),
      400,
      "validation_failed",
    );
  });
});

describe("PUT /users/password", () => {
  test("returns a fresh token and revokes every earlier one", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp("ann");
    const other = (await call("POST", LOGIN, { body: { username: "ann", password } })).body.token;
    const reply = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "a new secret!" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      refresh_token: expect.any(String),
      refresh_expires_in: expect.any(Number),
    });
    for (const old of [token, other])
      expectProblem(await call("GET", "/svc-api/v1/users/all", { token: old }), 401, "unauthorized");
    expect((await call("GET", "/svc-api/v1/users/all", { token: reply.body.token })).status).toBe(200);
    expectProblem(await call("POST", LOGIN, { body: { username: "ann", password } }), 401, "invalid_credentials");
    expect((await call("POST", LOGIN, { body: { username: "ann", password: "a new secret!" } })).status).toBe(200);
  });

  test("403 current_password_mismatch for a wrong current password; 400 for a short new one", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp();
    expectProblem(
      await call("PUT", "/svc-api/v1/users/password", {
        token,
        body: { current_password: "wrong one", new_password: "a new secret!" },
      }),
      403,
      "current_password_mismatch",
    );
    const short = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "short" },
    });
    expectProblem(short, 400, "validation_failed");
    expect(short.body.errors[0].field).toBe("new_password");
    expect((await call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
  });

  test("six concurrent changes with one token: exactly one wins; the others get 401 and change nothing", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp("ann");
    const candidates = Array.from({ length: 6 }, (_, i) => `new secret number ${i}`);
    const replies = await Promise.all(
      candidates.map((new_password) =>
        call("PUT", "/svc-api/v1/users/password", { token, body: { current_password: password, new_password } }),
      ),
    );
    const winners = replies.flatMap((reply, i) => (reply.status === 200 ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const reply of replies) if (reply.status !== 200) expectProblem(reply, 401, "unauthorized");

    const winner = winners[0]!;
    expect((await call("GET", "/svc-api/v1/users/all", { token: replies[winner]!.body.token })).status).toBe(200);
    // The winner's first: five wrong passwords in a row block the account, as they should.
    expect((await call("POST", LOGIN, { body: { username: "ann", password: candidates[winner] } })).status).toBe(200);
    for (const [i, pw] of candidates.entries()) {
      if (i !== winner)
        expectProblem(
          await call("POST", LOGIN, { body: { username: "ann", password: pw } }),
          401,
          "invalid_credentials",
        );
    }
  });
});

describe("a write on behalf of a token revoked while it ran does not land", () => {
  /** A store whose `action` first changes the user's password, as a concurrent request would. */
  const passwordChangedFirst =
    (action: "update" | "delete") =>
    (store: VersionedStore): VersionedStore => {
      const users: VersionedStore["users"] = { ...store.users };
      users[action] = (async (id: string, ...rest: unknown[]) => {
        const user = (await store.users.findById(id))!;
        await store.users.setPassword(id, "hash set meanwhile", new Date().toISOString(), user.tokenVersion);
        return (store.users[action] as (...args: unknown[]) => unknown)(id, ...rest);
      }) as never;
      return { ...store, users };
    };

  test("PUT /users/ (an e-mail change): 401, the e-mail stays", async () => {
    const { call, signUp, store } = await testApp({ store: passwordChangedFirst("update"), config: mailOff() });
    const { token, password, user } = await signUp("ann");
    const reply = await call("PUT", "/svc-api/v1/users/", {
      token,
      body: { email: "thief@example.com", current_password: password },
    });
    expectProblem(reply, 401, "unauthorized");
    expect((await store.users.findById(user.id))?.email).toBe("ann@example.com");
  });

  test("DELETE /users/: 401, the account stays", async () => {
    const { call, signUp, store } = await testApp({ store: passwordChangedFirst("delete") });
    const { token, user } = await signUp("ann");
    expectProblem(await call("DELETE", "/svc-api/v1/users/", { token }), 401, "unauthorized");
    expect(await store.users.findById(user.id)).not.toBeNull();
  });
});

describe("DELETE /users/", () => {
  test("deletes the caller: 204, tokens stop working, their categories stay without a creator", async () => {
    const { call, signUp, graphql, store } = await testApp();
    const { token, user } = await signUp("ann");
    const created = await graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    const id = created.body.data.createCategory.id;
    const reply = await call("DELETE", "/svc-api/v1/users/", { token });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    expectProblem(await call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
    expect(await store.users.findById(user.id)).toBeNull();
    expect(await store.categories.findById(id)).toMatchObject({ name: "Books", createdBy: null });
  });

  test("answers without a trailing slash too", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    expect((await call("DELETE", "/svc-api/v1/users", { token })).status).toBe(204);
  });
});
