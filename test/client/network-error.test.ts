// What a page learns when svc gives no answer, and when it asks, signed out, whether it has a session:
// network_error names CORS as the likely cause in a browser page on another origin than svc's, and a
// cookie-mode refresh with no cookie is an answer (204), not a failed request in the console.
import { afterEach, describe, expect, test } from "bun:test";
import { createClient, isSvcError, type SvcError } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";

const SVC = "http://127.0.0.1:8080";
const pageGlobal = globalThis as { location?: { origin: string } };

afterEach(() => {
  delete pageGlobal.location;
});

/** The SvcError a sign-in throws when fetch itself throws `thrown`. */
async function failure(thrown: Error): Promise<SvcError> {
  const fetch = (async () => {
    throw thrown;
  }) as unknown as typeof globalThis.fetch;
  const client = createClient({ baseUrl: SVC, fetch, mode: "cookie" });
  const error = await client.auth.login({ username: "ann", password: "x" }).catch((e: unknown) => e);
  expect(isSvcError(error, "network_error")).toBe(true);
  return error as SvcError;
}

describe("network_error", () => {
  test("a TypeError in a page on another origin: the detail says CORS is the likely cause, and what to list", async () => {
    pageGlobal.location = { origin: "http://localhost:5173" };
    const error = await failure(new TypeError("Failed to fetch"));
    expect(error.status).toBe(0);
    expect(error.title).toBe("No answer");
    expect(error.detail).toStartWith("Failed to fetch. Likely CORS: this page's origin http://localhost:5173");
    expect(error.detail).toContain(`svc's (${SVC})`);
    expect(error.detail).toContain("SVC_CORS_ORIGINS");
  });

  test("no CORS hint on svc's own origin, outside a browser, or for an abort", async () => {
    pageGlobal.location = { origin: SVC };
    expect((await failure(new TypeError("Failed to fetch"))).detail).toBe("Failed to fetch");
    delete pageGlobal.location;
    expect((await failure(new TypeError("fetch failed"))).detail).toBe("fetch failed");
    pageGlobal.location = { origin: "http://localhost:5173" };
    const aborted = await failure(new DOMException("The operation was aborted.", "AbortError"));
    expect(aborted.title).toBe("Aborted");
    expect(aborted.detail).not.toContain("CORS");
  });
});

describe("a signed-out page load in cookie mode", () => {
  test("auth.refresh() without a cookie: null, from a 204, and no refused request", async () => {
    const { app } = await testApp();
    const answered: number[] = [];
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      request.headers.set("origin", new URL(request.url).origin);
      const response = await app.handle(request);
      answered.push(response.status);
      return response;
    }) as typeof globalThis.fetch;
    const client = createClient({ baseUrl: "http://localhost", fetch, mode: "cookie" });
    expect(await client.auth.refresh()).toBeNull();
    expect(client.auth.session).toBeNull();
    expect(answered).toEqual([204]);
    // Known signed out: a call needing a token asks no more.
    expect(await client.auth.token()).toBeNull();
    expect(answered).toEqual([204]);
  });
});
