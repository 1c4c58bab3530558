// The GraphQL over HTTP specification's server audits (graphql-http), against svc with a bearer token.
// Every MUST and every SHOULD passes; the MAYs are reported too.
import { describe, expect, test } from "bun:test";
import { serverAudits } from "graphql-http";
import { testApp } from "../helpers.ts";

const { app, signUp } = await testApp();
const { token } = await signUp();

const audits = serverAudits({
  url: "http://localhost/graphql",
  fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    request.headers.set("authorization", `Bearer ${token}`);
    return app.handle(request);
  },
});

describe("GraphQL over HTTP audits", () => {
  test("there are audits to run", () => {
    expect(audits.length).toBeGreaterThan(50);
  });

  for (const audit of audits) {
    test(`${audit.id}: ${audit.name}`, async () => {
      const result = await audit.fn();
      expect({ status: result.status, reason: "reason" in result ? result.reason : undefined }).toEqual({
        status: "ok",
        reason: undefined,
      });
    });
  }
});
