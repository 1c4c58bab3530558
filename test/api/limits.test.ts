import { describe, expect, spyOn, test } from "bun:test";
import { expectProblem, testApp } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";

describe("input limits", () => {
  test("refuses JSON nested deeper than 32 levels with 400, before parsing it", async () => {
    const { call } = await testApp();
    const deep = `{"username":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const reply = await call("POST", CREATE, { raw: deep, headers: { "content-type": "application/json" } });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors[0].field).toBe("body");
  });

  test("counts nesting outside strings only", async () => {
    const { call } = await testApp();
    const password = `[[[[{{{{${"[".repeat(40)}`;
    const reply = await call("POST", CREATE, { body: { username: "ann", email: "a@b.co", password } });
    expect(reply.status).toBe(201);
  });

  test("refuses over-long fields before any hashing", async () => {
    const { call } = await testApp();
    const long = "p".repeat(100_000);
    const hashes = spyOn(Bun.password, "hash");
    const verifies = spyOn(Bun.password, "verify");
    // Other apps' decoy hashes may land meanwhile: only these passwords' count.
    const ofTheseRequests = (calls: unknown[][]) =>
      calls.filter(([password]) => password === long || password === "correct horse").length;
    try {
      for (const body of [
        { username: "ann", email: "a@b.co", password: long },
        { username: "a".repeat(100_000), email: "a@b.co", password: "correct horse" },
      ]) {
        expectProblem(await call("POST", CREATE, { body }), 400, "validation_failed");
      }
      expectProblem(
        await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: long } }),
        400,
        "validation_failed",
      );
      expect(ofTheseRequests(hashes.mock.calls)).toBe(0);
      expect(ofTheseRequests(verifies.mock.calls)).toBe(0);
      // The spies see hashing: a sign-up that is let through hashes its password.
      const bob = { username: "bob", email: "b@b.co", password: "correct horse" };
      expect((await call("POST", CREATE, { body: bob })).status).toBe(201);
      expect(ofTheseRequests(hashes.mock.calls)).toBe(1);
    } finally {
      hashes.mockRestore();
      verifies.mockRestore();
    }
  });
});

describe("HTTP headers", () => {
  test("auth responses are Cache-Control: no-store", async () => {
    const { call, signUp } = await testApp();
    const { token, password } = await signUp("ann");
    const login = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password } });
    expect(login.headers.get("cache-control")).toBe("no-store");
    const failed = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: "wrong one!" } });
    expect(failed.headers.get("cache-control")).toBe("no-store");
    const changed = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "a new secret!" },
    });
    expect(changed.headers.get("cache-control")).toBe("no-store");
    const logout = await call("POST", "/svc-api/v1/auth/logout", { token: changed.body.token });
    expect(logout.headers.get("cache-control")).toBe("no-store");
  });

  test("CORS is closed by default: no Access-Control-* headers, preflight refused", async () => {
    const { call } = await testApp();
    const simple = await call("GET", "/svc/health", { headers: { origin: "https://evil.example" } });
    expect([...simple.headers.keys()].filter((h) => h.startsWith("access-control-"))).toEqual([]);
    const preflight = await call("OPTIONS", "/svc-api/v1/users/all", {
      headers: { origin: "https://evil.example", "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("CORS opens for the origins SVC_CORS_ORIGINS lists, and only for them", async () => {
    const { call } = await testApp({ config: { corsOrigins: ["https://app.example.com"] } });
    const allowed = await call("OPTIONS", "/svc-api/v1/users/all", {
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });
    expect(allowed.status).toBeLessThan(300);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const simple = await call("GET", "/svc/health", { headers: { origin: "https://app.example.com" } });
    expect(simple.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const other = await call("GET", "/svc/health", { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    // Unknown paths stay 404 although CORS answers preflights everywhere.
    expectProblem(await call("GET", "/nothing"), 404, "not_found");
  });
});
