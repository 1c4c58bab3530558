// Where a sign-in through a provider may end (no open redirect), and the flow cookie's attributes.
import { describe, expect, test } from "bun:test";
import { flowCookie, sealedFlow } from "../src/auth/oidc/flow-cookie.ts";
import { returnTarget } from "../src/auth/oidc/return-to.ts";
import { AppError } from "../src/errors/index.ts";

const rules = {
  publicUrl: "https://svc.example.com",
  returnUrls: ["https://app.example.com/signed-in", "com.example.app:/oauth"],
};

function refused(given: string | undefined, mode: "cookie" | "code"): string {
  try {
    returnTarget(given, mode, rules);
  } catch (error) {
    if (error instanceof AppError) return `${error.status} ${error.code}`;
    throw error;
  }
  throw new Error(`accepted ${given}`);
}

describe("return_to", () => {
  test("svc's own pages and listed URLs are allowed", () => {
    expect(returnTarget(undefined, "cookie", rules)).toBe("https://svc.example.com/svc/admin");
    expect(returnTarget("/svc/console/#users", "cookie", rules)).toBe("https://svc.example.com/svc/console/#users");
    expect(returnTarget("https://svc.example.com/svc/console/", "cookie", rules)).toBe(
      "https://svc.example.com/svc/console/",
    );
    expect(returnTarget("https://app.example.com/signed-in?next=/a", "cookie", rules)).toBe(
      "https://app.example.com/signed-in?next=/a",
    );
    expect(returnTarget("https://app.example.com/signed-in", "code", rules)).toBe("https://app.example.com/signed-in");
    expect(returnTarget("com.example.app:/oauth", "code", rules)).toBe("com.example.app:/oauth");
  });

  test("svc behind a path prefix allows only its own prefix", () => {
    const prefixed = { ...rules, publicUrl: "https://example.com/svc-prefix" };
    expect(returnTarget(undefined, "cookie", prefixed)).toBe("https://example.com/svc-prefix/svc/admin");
    expect(returnTarget("https://example.com/svc-prefix/x", "cookie", prefixed)).toBe(
      "https://example.com/svc-prefix/x",
    );
    expect(() => returnTarget("https://example.com/other-app/", "cookie", prefixed)).toThrow(AppError);
  });

  test.each([
    ["a foreign origin", "https://evil.example.net/", "cookie"],
    ["a protocol-relative path", "//evil.example.net/x", "cookie"],
    ["a backslash path", "/\\evil.example.net/x", "cookie"],
    ["a look-alike host", "https://svc.example.com.evil.net/", "cookie"],
    ["another port", "https://svc.example.com:8443/", "cookie"],
    ["http for an https svc", "http://svc.example.com/svc/console/", "cookie"],
    ["a listed URL's longer path", "https://app.example.com/signed-in/more", "cookie"],
    ["credentials", "https://user:pw@app.example.com/signed-in", "cookie"],
    ["javascript:", "javascript:alert(1)", "cookie"],
    ["not a URL", "not a url", "cookie"],
    ["code mode without return_to", undefined, "code"],
    ["code mode to svc's own page", "https://svc.example.com/svc/console/", "code"],
    ["code mode to a path", "/svc/console/", "code"],
  ] as const)("refused: %s", (_name, given, mode) => {
    expect(refused(given, mode)).toBe("400 invalid_return_to");
  });
});

describe("the flow cookie", () => {
  test("over HTTPS: __Secure-, Secure, HttpOnly, Lax, the OIDC routes' path, 10 minutes", () => {
    const request = new Request("https://svc.example.com/svc-api/v1/auth/oidc/google");
    const cookie = flowCookie(request, 0, "sealed-value");
    expect(cookie).toStartWith("__Secure-svc_oidc=sealed-value;");
    expect(cookie).toContain("Path=/svc-api/v1/auth/oidc");
    expect(cookie).toContain("Max-Age=600");
    expect(cookie).toContain("Secure");
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    const back = new Request(request.url, { headers: { cookie: "__Secure-svc_oidc=sealed-value; other=1" } });
    expect(sealedFlow(back, 0)).toBe("sealed-value");
  });

  test("over plain HTTP: no prefix, not Secure; a plain cookie is not read over HTTPS", () => {
    const request = new Request("http://127.0.0.1:8080/svc-api/v1/auth/oidc/google");
    const cookie = flowCookie(request, 0, "v");
    expect(cookie).toStartWith("svc_oidc=v;");
    expect(cookie).not.toContain("Secure");
    const https = new Request("https://svc.example.com/x", { headers: { cookie: "svc_oidc=planted" } });
    expect(sealedFlow(https, 0)).toBeUndefined();
  });

  test("ending a flow clears the cookie", () => {
    expect(flowCookie(new Request("https://svc.example.com/"), 0, null)).toContain("Max-Age=0");
  });
});
