// SVC_SMTP_URL, SVC_MAIL_FROM, SVC_PUBLIC_URL, SVC_MAIL_KEEP, SVC_EMAIL_VERIFICATION, SVC_MAIL_PRODUCT_NAME and
// SVC_MAIL_TEMPLATES as parseConfig reads them: each bad value one line naming its variable (exit 2 from the
// CLI), never the SMTP password.
import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfig } from "../src/config/index.ts";
import { captureCli } from "./support/cli.ts";

const SECRET = "3q2+7wAbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+==";
const PRODUCTION = { SVC_ENV: "production", SVC_JWT_SECRET: SECRET, SVC_DATABASE_URL: "sqlite::memory:" };
const SMTP = {
  SVC_SMTP_URL: "smtp://mailer:hunter2-secret@mail.example.com:587",
  SVC_MAIL_FROM: "svc@example.com",
  SVC_PUBLIC_URL: "https://svc.example.com",
};

const refusal = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("accepted");
};

describe("mail settings", () => {
  test("in development without SVC_SMTP_URL: mails are logged, links point at localhost, verification optional", () => {
    expect(parseConfig({}).mail).toEqual({
      transport: { kind: "log" },
      from: "svc@localhost",
      publicUrl: "http://localhost:8080",
      keepSeconds: 7 * 86400,
      verification: "optional",
      productName: "svc",
      templatesDir: null,
      templates: {},
      warnings: [],
    });
    expect(parseConfig({ SVC_PORT: "9000" }).mail.publicUrl).toBe("http://localhost:9000");
  });

  test("in production without SVC_SMTP_URL mail is off, and so is verification", () => {
    expect(parseConfig(PRODUCTION).mail).toMatchObject({ transport: { kind: "off" }, verification: "off" });
  });

  test("read an SMTP server: smtp:// with STARTTLS required, smtps://, tls=off on loopback", () => {
    const server = (url: string) => {
      const { transport } = parseConfig({ ...SMTP, SVC_SMTP_URL: url }).mail;
      return transport.kind === "smtp" ? transport.server : null;
    };
    expect(server(SMTP.SVC_SMTP_URL)).toEqual({
      host: "mail.example.com",
      port: 587,
      secure: false,
      requireTls: true,
      user: "mailer",
      password: "hunter2-secret",
    });
    expect(server("smtps://a%40b:p%2Fw@mail.example.com")).toMatchObject({
      port: 465,
      secure: true,
      requireTls: false,
      user: "a@b",
      password: "p/w",
    });
    expect(server("smtp://127.0.0.1:25?tls=off")).toMatchObject({ port: 25, requireTls: false, user: null });
    expect(server("smtp://[::1]:2525?tls=off")).toMatchObject({ host: "::1", port: 2525, requireTls: false });
  });

  test("read every other variable", () => {
    const mail = parseConfig({
      ...SMTP,
      SVC_PUBLIC_URL: "https://example.com/svc/",
      SVC_MAIL_FROM: "Acme <no-reply@example.com>",
      SVC_MAIL_KEEP: "30d",
      SVC_EMAIL_VERIFICATION: "required",
      SVC_MAIL_PRODUCT_NAME: "Acme",
    }).mail;
    expect(mail).toMatchObject({
      from: "Acme <no-reply@example.com>",
      publicUrl: "https://example.com/svc",
      keepSeconds: 30 * 86400,
      verification: "required",
      productName: "Acme",
    });
  });

  const bad: Array<[string, Record<string, string>, string]> = [
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "not a url" }, "SVC_SMTP_URL: must be a URL"],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "http://mail.example.com" }, "SVC_SMTP_URL: must start with smtp:// or smtps://"],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "smtp://mail.example.com/inbox" }, "SVC_SMTP_URL: must not have a path"],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "smtp://mail.example.com?pool=1" }, "SVC_SMTP_URL: has an unknown option: pool"],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "smtp://mail.example.com?tls=on" }, "SVC_SMTP_URL: tls may only be off"],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "smtps://localhost?tls=off" }, "SVC_SMTP_URL: cannot be smtps:// with tls=off"],
    [
      "SVC_SMTP_URL",
      { SVC_SMTP_URL: "smtp://mail.example.com:25?tls=off" },
      "SVC_SMTP_URL: may turn TLS off only for a loopback host",
    ],
    ["SVC_SMTP_URL", { SVC_SMTP_URL: "smtp://mailer@mail.example.com" }, "SVC_SMTP_URL: must give both a user"],
    ["SVC_MAIL_FROM", { SVC_MAIL_FROM: "" }, "SVC_MAIL_FROM: is required with SVC_SMTP_URL"],
    ["SVC_MAIL_FROM", { SVC_MAIL_FROM: "not an address" }, "SVC_MAIL_FROM: must be an address"],
    ["SVC_MAIL_FROM", { SVC_MAIL_FROM: "a@b.c\r\nBcc: x@y.z" }, "SVC_MAIL_FROM: must be an address"],
    ["SVC_PUBLIC_URL", { SVC_PUBLIC_URL: "" }, "SVC_PUBLIC_URL: is required with SVC_SMTP_URL"],
    ["SVC_PUBLIC_URL", { SVC_PUBLIC_URL: "svc.example.com" }, "SVC_PUBLIC_URL: must be a URL"],
    ["SVC_PUBLIC_URL", { SVC_PUBLIC_URL: "ftp://svc.example.com" }, "SVC_PUBLIC_URL: must be an http:// or https://"],
    ["SVC_PUBLIC_URL", { SVC_PUBLIC_URL: "https://svc.example.com/?a=1" }, "SVC_PUBLIC_URL: must not carry a query"],
    ["SVC_MAIL_KEEP", { SVC_MAIL_KEEP: "soon" }, "SVC_MAIL_KEEP: "],
    ["SVC_MAIL_KEEP", { SVC_MAIL_KEEP: "10s" }, "SVC_MAIL_KEEP: "],
    ["SVC_EMAIL_VERIFICATION", { SVC_EMAIL_VERIFICATION: "always" }, "SVC_EMAIL_VERIFICATION: one of off, optional"],
    ["SVC_MAIL_TEMPLATES", { SVC_MAIL_TEMPLATES: "/nonexistent/svc-templates" }, "SVC_MAIL_TEMPLATES: "],
  ];

  test("refuse each bad value with one line naming its variable, never the SMTP password", () => {
    for (const [variable, env, start] of bad) {
      const message = refusal({ ...SMTP, ...env });
      expect({ variable, message }).toEqual({ variable, message: expect.stringMatching(new RegExp(`^${variable}: `)) });
      expect(message).toStartWith(start);
      expect(message).not.toContain("\n");
      expect(message).not.toContain("hunter2");
    }
  });

  test("a password in a bad SVC_SMTP_URL is not repeated", () => {
    const message = refusal({ ...SMTP, SVC_SMTP_URL: "smtp://mailer:hunter2-secret@mail.example.com/path" });
    expect(message).toContain("smtp://***@mail.example.com/path");
    expect(message).not.toContain("mailer:");
    expect(message).not.toContain("hunter2");
  });

  // An SES password often holds a "/"; any may hold "@" or "%". Each refused or read without ever echoing it.
  const awkward: Array<[string, string]> = [
    ["a raw /", "smtp://mailer:AbC/dEf+gHi12@mail.example.com:587"],
    ["a raw / that reads as a port and path", "smtp://mailer:12/secret-pw@mail.example.com:587"],
    ["a raw @ and a bad option", "smtp://mailer:p@ss-secret-pw@mail.example.com:587?pool=1"],
    ["a raw % that is not percent-encoding", "smtp://mailer:50%off-secret-pw@mail.example.com:587"],
    ["a raw % in the user", "smtp://mail%zz:secret-pw@mail.example.com:587"],
  ];

  test("a password with a raw /, @ or %: one line naming SVC_SMTP_URL, exit 2, the password never shown", async () => {
    for (const [what, url] of awkward) {
      const password = url.slice(url.indexOf(":", 6) + 1, url.lastIndexOf("@"));
      const message = refusal({ ...SMTP, SVC_SMTP_URL: url });
      expect({ what, message }).toEqual({ what, message: expect.stringMatching(/^SVC_SMTP_URL: /) });
      expect(message).not.toContain(password);
      expect(message).not.toContain("secret");
      const { code, out, err } = await captureCli(["serve"], { ...SMTP, SVC_SMTP_URL: url });
      expect({ what, code, out }).toEqual({ what, code: 2, out: "" });
      expect(err).toStartWith("svc: SVC_SMTP_URL: ");
      expect(err.trim().split("\n")).toHaveLength(1);
      expect(err).not.toContain(password);
      expect(err).not.toContain("secret");
    }
  });

  test("a raw @ in the password alone is read as the URL standard reads it, the last @ ending the password", () => {
    const { transport } = parseConfig({ ...SMTP, SVC_SMTP_URL: "smtp://mailer:p@ss@mail.example.com:587" }).mail;
    expect(transport).toMatchObject({ server: { host: "mail.example.com", user: "mailer", password: "p@ss" } });
  });

  test("in production without SMTP: required stops start-up; optional is off, with a warning; off is off", async () => {
    expect(refusal({ ...PRODUCTION, SVC_EMAIL_VERIFICATION: "required" })).toStartWith(
      "SVC_EMAIL_VERIFICATION: needs mail",
    );
    const required = await captureCli(["serve"], { ...PRODUCTION, SVC_EMAIL_VERIFICATION: "required" });
    expect(required).toMatchObject({ code: 2, out: "" });
    expect(required.err).toStartWith("svc: SVC_EMAIL_VERIFICATION: needs mail");
    const optional = parseConfig({ ...PRODUCTION, SVC_EMAIL_VERIFICATION: "optional" }).mail;
    expect(optional).toMatchObject({ transport: { kind: "off" }, verification: "off" });
    expect(optional.warnings).toEqual([
      "SVC_EMAIL_VERIFICATION=optional is off: mail is off (no SVC_SMTP_URL in production), so no link can be sent",
    ]);
    for (const env of [PRODUCTION, { ...PRODUCTION, SVC_EMAIL_VERIFICATION: "off" }, SMTP])
      expect(parseConfig(env).mail.warnings).toEqual([]);
    expect(parseConfig({ ...PRODUCTION, SVC_EMAIL_VERIFICATION: "off" }).mail.verification).toBe("off");
  });

  test("svc serve stops with that one line and exit 2, without the password", async () => {
    for (const [variable, env] of bad) {
      const { code, out, err } = await captureCli(["serve"], { ...SMTP, ...env });
      expect({ variable, code, out }).toEqual({ variable, code: 2, out: "" });
      expect(err).toStartWith(`svc: ${variable}: `);
      expect(err.trim().split("\n")).toHaveLength(1);
      expect(err).not.toContain("hunter2");
    }
  });
});
