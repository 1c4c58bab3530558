// The admin console as served: the page, its hashed assets, its CSP and its weight. The console in a
// real browser is test/e2e/console-browser.test.ts.
import { describe, expect, test } from "bun:test";
import { CONSOLE_CSP, consoleWeight } from "../src/console/index.ts";
import { expectProblem, testApp } from "./helpers.ts";

describe("the console, served", () => {
  test("at /svc/admin: the page and its hashed assets, with a strict CSP and no framing; 404 when turned off", async () => {
    const app = await testApp();
    const page = await app.call("GET", "/svc/admin");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toContain("unsafe-inline");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    // No inline script: every script is a file of the console's own.
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const reply = await app.call("GET", asset);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
    expectProblem(await app.call("GET", "/svc/admin/index-nothing.js"), 404, "not_found");
    expect((await app.call("GET", "/svc/admin/")).status).toBe(200);
    const off = await testApp({ config: { adminConsole: false } });
    expectProblem(await off.call("GET", "/svc/admin"), 404, "not_found");
    expect((await off.call("GET", assets[0]!)).status).toBe(404);
  });

  test("script and styles go gzipped to a browser that takes it (under half their size), plain to one that does not", async () => {
    const app = await testApp();
    const page = await app.call("GET", "/svc/admin");
    const assets = [...page.text.matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const plain = await app.app.handle(new Request(`http://localhost${asset}`));
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(plain.headers.get("vary")).toBe("Accept-Encoding");
      const plainBytes = new Uint8Array(await plain.arrayBuffer());

      const zipped = await app.app.handle(
        new Request(`http://localhost${asset}`, { headers: { "accept-encoding": "gzip, deflate, br, zstd" } }),
      );
      expect(zipped.status).toBe(200);
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(zipped.headers.get("vary")).toBe("Accept-Encoding");
      expect(zipped.headers.get("content-type")).toBe(plain.headers.get("content-type"));
      expect(zipped.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(zipped.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      const gzipped = new Uint8Array(await zipped.arrayBuffer());
      expect(Bun.gunzipSync(gzipped)).toEqual(plainBytes);
      expect(gzipped.byteLength).toBeLessThan(plainBytes.byteLength / 2);

      // "gzip;q=0" is a refusal, as RFC 9110 has it.
      const refused = await app.app.handle(
        new Request(`http://localhost${asset}`, { headers: { "accept-encoding": "gzip;q=0, br" } }),
      );
      expect(refused.headers.get("content-encoding")).toBeNull();
      expect(new Uint8Array(await refused.arrayBuffer())).toEqual(plainBytes);
    }
  });

  test("offers a new account form, marking an address verified, the invitations, mail and backups views, and Forgot password?, which call their routes", async () => {
    const app = await testApp();
    const page = await app.call("GET", "/svc/admin");
    const script = [...page.text.matchAll(/src="(\/svc\/admin\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(script).toHaveLength(1);
    const code = (await app.call("GET", script[0]!)).text;
    for (const text of [
      "New account",
      "Create account",
      "/admin/users",
      "Mark verified",
      "/email-verified",
      "unverified",
      "Invitations",
      "Issue invitation",
      "/admin/invitations",
      "Back up now",
      "/admin/backups",
      "Forgot password?",
      "/auth/password-reset/request",
      "If an account has this address",
      "Mails, newest first",
      "/admin/mail",
      "/resend",
      "Resend the mail to",
    ])
      expect({ text, offered: code.includes(text) }).toEqual({ text, offered: true });
  });

  test("offers the second factors: the two-step sign-in, passkeys, the account's app, and clearing a user's", async () => {
    const app = await testApp();
    const page = await app.call("GET", "/svc/admin");
    const script = [...page.text.matchAll(/src="(\/svc\/admin\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const code = (await app.call("GET", script[0]!)).text;
    for (const text of [
      "Sign in with a passkey",
      "passkeys/sign-in/options",
      "passkeys/sign-in",
      "one-time-code",
      "Use a recovery code",
      "mfa/verify",
      "Second factor",
      "Set up an authenticator app",
      "/totp/confirm",
      "Add a passkey",
      "navigator.credentials",
      "Clear second factors",
      "/mfa`",
    ])
      expect({ text, offered: code.includes(text) }).toEqual({ text, offered: true });
  });

  test("weighs under 200 KB, HTML, script and styles together, uncompressed", async () => {
    const { files, bytes } = await consoleWeight();
    expect(files).toBe(3);
    expect(bytes).toBeLessThan(200 * 1024);
  });
});
