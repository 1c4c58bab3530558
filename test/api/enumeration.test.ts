// An unknown user and a wrong password must look the same: same status, same bytes, same time.
import { describe, expect, test } from "bun:test";
import { PRODUCTION_PASSWORD_COST } from "../../src/config.ts";
import { testApp } from "../helpers.ts";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe("no account enumeration through login", () => {
  test("unknown user and wrong password: byte-identical 401s whose median timings are within 20%", async () => {
    // Production argon2id cost, so the comparison is of the real work; throttling out of the way.
    const { call, signUp } = await testApp({
      config: {
        passwordCost: PRODUCTION_PASSWORD_COST,
        loginThrottle: { maxFailures: 1000, backoffBaseMs: 1, backoffMaxMs: 1, clientMaxFailures: 1_000_000, clientWindowMs: 1000 },
      },
    });
    await signUp("ann", "correct horse battery");
    const attempt = async (username: string) => {
      const started = performance.now();
      const reply = await call("POST", "/svc-api/v1/auth/login", { body: { username, password: "wrong horse battery" } });
      return { ms: performance.now() - started, status: reply.status, text: reply.text };
    };
    await attempt("ann"); // warm-up: the decoy hash and the common-password list are built lazily
    await attempt("nobody");
    const known: number[] = [];
    const unknown: number[] = [];
    const bodies = new Set<string>();
    for (let i = 0; i < 15; i++) {
      for (const [name, into] of [["ann", known], [`nobody${i}`, unknown]] as const) {
        const result = await attempt(name);
        expect(result.status).toBe(401);
        bodies.add(result.text);
        into.push(result.ms);
      }
    }
    expect(bodies.size).toBe(1);
    const ratio = median(unknown) / median(known);
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.2);
  }, 60_000);
});
