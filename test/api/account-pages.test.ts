// The pages mailed links open (src/mail/pages.ts): served by svc, with a strict CSP, no Referer, never
// cached, and holding no token (the token is in the link's fragment, which reaches no server).
import { describe, expect, test } from "bun:test";
import { ACCOUNT_PAGES } from "../../src/mail/links.ts";
import { testApp } from "../helpers.ts";
import { mailedToken } from "../support/mail-links.ts";

describe("account pages", () => {
  test("each page: HTML with a strict CSP, no-referrer, no-store, no framing; its script and style from svc itself", async () => {
    const { call } = await testApp();
    for (const [name, path] of Object.entries(ACCOUNT_PAGES)) {
      const page = await call("GET", path);
      expect({ name, status: page.status }).toEqual({ name, status: 200 });
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      // Nothing from elsewhere, and no inline script: the one script is svc's own.
      expect(page.text).not.toMatch(/https?:\/\//);
      expect([...page.text.matchAll(/<script[^>]*>/g)].map((m) => m[0])).toEqual(['<script src="account.js">']);
    }
    for (const asset of ["/svc/account/account.js", "/svc/account/account.css"]) {
      const reply = await call("GET", asset);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(reply.headers.get("cache-control")).toBe("no-store");
    }
    const script = (await call("GET", "/svc/account/account.js")).text;
    // It reads the fragment, takes it out of the address bar at once, and POSTs it without a Referer.
    expect(script).toContain("location.hash");
    expect(script).toContain("history.replaceState");
    expect(script).toContain('referrerPolicy: "no-referrer"');
    for (const route of ["/auth/password-reset", "/auth/email/verify", "/auth/email/confirm-change"])
      expect(script).toContain(route);
  });

  test("the page a reset mail links to is the same for every link: it holds no token", async () => {
    const { call, signUp, store } = await testApp();
    await signUp("ann");
    expect(
      (await call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: "ann@example.com" } })).status,
    ).toBe(202);
    const { link, token } = await mailedToken(store, "ann@example.com", "password_reset");
    const url = new URL(link);
    expect(url.pathname).toBe(ACCOUNT_PAGES.resetPassword);
    expect(url.search).toBe("");
    // What a browser asks for: the path alone (the fragment stays in the browser).
    const page = await call("GET", url.pathname);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(token);
    expect(page.text).toBe((await call("GET", ACCOUNT_PAGES.resetPassword)).text);
  });
});
