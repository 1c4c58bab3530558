import { describe, expect, setSystemTime, test } from "bun:test";
import { SignJWT } from "jose";
import { expectProblem, testApp, TEST_SECRET } from "../helpers.ts";

const key = new TextEncoder().encode(TEST_SECRET);
const now = () => Math.floor(Date.now() / 1000);

async function forge(claims: Record<string, unknown>, options: { alg?: string; secret?: Uint8Array } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .sign(options.secret ?? key);
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

describe("bearer tokens", () => {
  test("carry sub, iat, exp (15 minutes on), iss=svc, jti, a version and the session, signed HS256", async () => {
    const { signUp } = await testApp();
    const { token, user } = await signUp();
    const [header, payload] = token
      .split(".")
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
    expect(header).toEqual({ alg: "HS256", typ: "JWT" });
    expect(payload).toMatchObject({ sub: user.id, iss: "svc", ver: 0, sid: expect.any(String) });
    expect(payload.exp - payload.iat).toBe(900);
    // The order jose's SignJWT wrote them in, which the signer keeps.
    expect(Object.keys(payload)).toEqual(["sub", "ver", "sid", "amr", "iss", "jti", "iat", "exp"]);
    expect(typeof payload.jti).toBe("string");
  });

  test("a valid forged-with-the-key token works, proving the forging helper is sound", async () => {
    const { call, signUp } = await testApp();
    const { user } = await signUp();
    const token = await forge({ sub: user.id, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 });
    expect((await call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
  });

  const cases: Array<[string, (userId: string) => Promise<string>]> = [
    ["an expired token", (sub) => forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now() - 120, exp: now() - 60 })],
    ["a token without exp", (sub) => forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now() })],
    [
      "a token from another issuer",
      (sub) => forge({ sub, ver: 0, iss: "elsewhere", jti: "j", iat: now(), exp: now() + 60 }),
    ],
    [
      "a token signed with another key",
      (sub) =>
        forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 }, { secret: new Uint8Array(32) }),
    ],
    [
      "an HS512 token with the right key",
      (sub) => forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 }, { alg: "HS512" }),
    ],
    [
      "a token with an old version",
      (sub) => forge({ sub, ver: -1, iss: "svc", jti: "j", iat: now(), exp: now() + 60 }),
    ],
    ["a token without a version", (sub) => forge({ sub, iss: "svc", jti: "j", iat: now(), exp: now() + 60 })],
    [
      "a token for an unknown user",
      () =>
        forge({
          sub: "01937a6e-0000-7000-8000-000000000000",
          ver: 0,
          iss: "svc",
          jti: "j",
          iat: now(),
          exp: now() + 60,
        }),
    ],
    ...["none", "None", "NONE", "nOnE"].map((alg): [string, (sub: string) => Promise<string>] => [
      `an alg:${alg} token`,
      async (sub) =>
        `${base64url({ alg, typ: "JWT" })}.${base64url({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 })}.`,
    ]),
    [
      "an alg:none token that keeps a signature",
      async (sub) =>
        `${base64url({ alg: "none", typ: "JWT" })}.${base64url({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 })}.c2ln`,
    ],
    [
      "a token not valid before a future nbf",
      (sub) => forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), nbf: now() + 600, exp: now() + 900 }),
    ],
    ["a token without a jti", (sub) => forge({ sub, ver: 0, iss: "svc", iat: now(), exp: now() + 60 })],
    [
      "a token with an empty signature",
      async (sub) =>
        (await forge({ sub, ver: 0, iss: "svc", jti: "j", iat: now(), exp: now() + 60 })).replace(/[^.]+$/, ""),
    ],
    ["garbage", async () => "not.a.token"],
  ];

  test.each(cases)("rejects %s: 401 unauthorized, invalid_token", async (_, make) => {
    const { call, signUp } = await testApp();
    const { user } = await signUp();
    const reply = await call("GET", "/svc-api/v1/users/all", { token: await make(user.id) });
    expectProblem(reply, 401, "unauthorized");
    expect(reply.headers.get("www-authenticate")).toBe('Bearer realm="svc", error="invalid_token"');
  });

  // The same rules wherever a token is read: GraphQL's routes and the auth routes mount the verifying plugin
  // apart from the bearer check's.
  test.each(cases)("rejects %s on GraphQL: 401 UNAUTHENTICATED, and nothing stored", async (_, make) => {
    const app = await testApp();
    const { user } = await app.signUp();
    const token = await make(user.id);
    const reply = await app.graphql(`mutation { createCategory(input: { name: "Forged" }) { id } }`, { token });
    expect(reply.status).toBe(401);
    expect(reply.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const list = await app.graphql("{ listAllCategories { name } }", { token: (await app.signUp()).token });
    expect(list.body.data.listAllCategories).toEqual([]);
  });

  test.each(cases)("rejects %s as the Bearer of a logout: 401, the session still works", async (_, make) => {
    const { call, signUp } = await testApp();
    const { user, token: real } = await signUp();
    const reply = await call("POST", "/svc-api/v1/auth/logout", { token: await make(user.id) });
    expectProblem(reply, 401, "unauthorized");
    expect((await call("GET", "/svc-api/v1/users/me", { token: real })).status).toBe(200);
  });

  test("rejects an edited payload and a stripped signature", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const bob = await signUp("bob");
    const [header, , signature] = ann.token.split(".");
    const payload = JSON.parse(Buffer.from(ann.token.split(".")[1]!, "base64url").toString());
    const edited = `${header}.${base64url({ ...payload, sub: bob.user.id })}.${signature}`;
    expectProblem(await call("GET", "/svc-api/v1/users/all", { token: edited }), 401, "unauthorized");
    const stripped = ann.token.split(".").slice(0, 2).join(".") + ".";
    expectProblem(await call("GET", "/svc-api/v1/users/all", { token: stripped }), 401, "unauthorized");
  });

  test("is read only from the Authorization header, never from the query string, a cookie or another header", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    for (const place of [`?access_token=${token}`, `?token=${token}`, `?authorization=Bearer%20${token}`]) {
      expectProblem(await call("GET", `/svc-api/v1/users/all${place}`), 401, "unauthorized");
    }
    expectProblem(
      await call("GET", "/svc-api/v1/users/all", { headers: { cookie: `token=${token}` } }),
      401,
      "unauthorized",
    );
    expectProblem(
      await call("GET", "/svc-api/v1/users/all", { headers: { "x-access-token": token } }),
      401,
      "unauthorized",
    );
    const graphql = await call(
      "GET",
      `/graphql?query=${encodeURIComponent("{ categories { id } }")}&access_token=${token}`,
    );
    expect(graphql.status).toBe(401);
  });

  test("rejects an Authorization header that is not Bearer", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const reply = await call("GET", "/svc-api/v1/users/all", { headers: { authorization: `Basic ${token}` } });
    expectProblem(reply, 401, "unauthorized");
  });

  test("accepts the scheme in any case", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    expect((await call("GET", "/svc-api/v1/users/all", { headers: { authorization: `bearer ${token}` } })).status).toBe(
      200,
    );
  });

  test("a token already verified is read from the header by the same rule: other spacing and case work, anything more is refused", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const read = (authorization: string) => call("GET", "/svc-api/v1/users/all", { headers: { authorization } });
    expect((await read(`Bearer ${token}`)).status).toBe(200);
    for (const authorization of [`BEARER ${token}`, `Bearer   ${token}`, `Bearer ${token}  `]) {
      expect((await read(authorization)).status).toBe(200);
    }
    for (const authorization of [`Bearer ${token} x`, `Bearer ${token}!`, `Bearer ${token}.`, `Bearer  x${token}`]) {
      expectProblem(await read(authorization), 401, "unauthorized");
    }
  });

  test("a token that has worked stops working when it expires (verified tokens are remembered only until then)", async () => {
    const { call, signUp } = await testApp({ config: { jwt: { secret: key, ephemeral: false, ttlSeconds: 1 } } });
    // exp is in whole seconds: the clock is set just after a second starts, so the token lives ~1 s,
    // then moved past its expiry.
    const start = Math.ceil(Date.now() / 1000) * 1000 + 10;
    setSystemTime(new Date(start));
    try {
      const { token } = await signUp("ann");
      expect((await call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
      setSystemTime(new Date(start + 1100));
      expectProblem(await call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
    } finally {
      setSystemTime();
    }
  });

  test("honours SVC_JWT_TTL in exp and expires_in", async () => {
    const { call, signUp } = await testApp({ config: { jwt: { secret: key, ephemeral: false, ttlSeconds: 900 } } });
    const { password } = await signUp("ann");
    const reply = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password } });
    expect(reply.body.expires_in).toBe(900);
  });
});

describe("POST /auth/logout", () => {
  test("revokes the presented token at once, and only that token: 204", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp("ann");
    const other = (await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password } })).body.token;
    const reply = await call("POST", "/svc-api/v1/auth/logout", { token });
    expect(reply.status).toBe(204);
    expectProblem(await call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
    expectProblem(await call("POST", "/svc-api/v1/auth/logout", { token }), 401, "unauthorized");
    expect((await call("GET", "/svc-api/v1/users/all", { token: other })).status).toBe(200);
    expect((await call("POST", "/graphql", { body: { query: "{ categories { id } }" }, token })).status).toBe(401);
  });

  test("needs a valid token: 401 otherwise", async () => {
    const { call } = await testApp();
    expectProblem(await call("POST", "/svc-api/v1/auth/logout"), 401, "unauthorized");
    expectProblem(await call("POST", "/svc-api/v1/auth/logout", { token: "nope" }), 401, "unauthorized");
  });

  test("a token from before sessions (no sid) is revoked by its jti, kept only until it would have expired", async () => {
    const { call, signUp, store } = await testApp();
    const { user } = await signUp("ann");
    const jti = "legacy-token";
    const exp = now() + 600;
    const token = await forge({ sub: user.id, ver: 0, iss: "svc", jti, iat: now(), exp });
    expect((await call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    const revoked = async (id: string) => (await store.tokenHolder(user.id, id))!.revoked;
    expect((await call("POST", "/svc-api/v1/auth/logout", { token })).status).toBe(204);
    expectProblem(await call("GET", "/svc-api/v1/users/me", { token }), 401, "unauthorized");
    expect(await revoked(jti)).toBe(true);
    expect(exp).toBeGreaterThan(now());
    // A later revocation sweeps out those whose tokens have expired.
    await store.revocations.revoke("expired-one", new Date(Date.now() - 1000).toISOString());
    await store.revocations.revoke("another", new Date(Date.now() + 60_000).toISOString());
    expect(await revoked("expired-one")).toBe(false);
    expect(await revoked(jti)).toBe(true);
  });
});
