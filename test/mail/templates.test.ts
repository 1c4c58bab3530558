// Mail templates: the built-in text and HTML of each kind with the product name, every variable escaped
// in HTML, and an SVC_MAIL_TEMPLATES folder overriding them, checked at start (one line naming the file).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, parseConfig } from "../../src/config/index.ts";
import type { MailKind } from "../../src/db/store.ts";
import { createComposer, type MailVariables } from "../../src/mail/compose.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { testConfig } from "../helpers.ts";
import { captureCli } from "../support/cli.ts";

const { secret } = testConfig().jwt;

let root: string;
let count = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "svc-templates-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder holding these files. */
function folder(files: Record<string, string | Uint8Array>): string {
  const dir = join(root, `t${count++}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const refusal = (dir: string) => {
  try {
    parseConfig({ SVC_MAIL_TEMPLATES: dir });
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("accepted");
};

const KINDS: MailKind[] = ["verify_email", "password_reset", "password_changed", "email_change", "email_changed"];
const HOSTILE = `<script>alert("x")</script>&'`;

describe("built-in templates", () => {
  const composer = createComposer({ productName: "Acme & Co", publicUrl: "https://svc.example.com", secret });
  for (const kind of KINDS) {
    test(`${kind}: subject, text and HTML with the product name, every variable escaped in HTML`, async () => {
      const link = "https://svc.example.com/svc/account/page#token=a&b";
      const sealed = composer.compose(
        kind,
        { address: "ann@example.com", userId: null },
        { username: HOSTILE, link, email: "new<x>@example.com" },
      );
      // Sealed for the outbox: the token is not in it until opened.
      expect(sealed.textBody).not.toContain("token=");
      const mail = (await openBodies(sealed, secret))!;
      expect(mail.subject).toContain("Acme & Co");
      expect(mail.subject).not.toContain("\n");
      expect(mail.textBody).toContain(HOSTILE);
      expect(mail.htmlBody).toContain("Acme &amp; Co");
      expect(mail.htmlBody).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
      expect(mail.htmlBody).not.toContain("<script>");
      expect(mail.htmlBody).not.toContain("new<x>");
      const carriesLink = kind === "verify_email" || kind === "password_reset" || kind === "email_change";
      expect(mail.textBody.includes(link)).toBe(carriesLink);
      expect(mail.htmlBody.includes('href="https://svc.example.com/svc/account/page#token=a&amp;b"')).toBe(carriesLink);
      expect(mail.messageId).toBe(`<${mail.id}@svc.example.com>`);
    });
  }
});

describe("SVC_MAIL_TEMPLATES", () => {
  test("its files replace the built-in ones they name; the rest stay", async () => {
    const dir = folder({
      "verify_email.subject.txt": "Welcome to {{ product }}, {{username}}\n",
      "verify_email.html": '<p>Hi {{username}}, <a href="{{link}}">confirm</a></p>',
      "password_changed.text.txt": "{{username}}: new password at {{product}}.\n",
      ".DS_Store": "ignored",
    });
    const config = parseConfig({ SVC_MAIL_TEMPLATES: dir, SVC_MAIL_PRODUCT_NAME: "Acme" }).mail;
    const composer = createComposer({ ...config, secret });
    const to = { address: "ann@example.com", userId: null };
    const compose = (kind: MailKind, variables: MailVariables) =>
      openBodies(composer.compose(kind, to, variables), secret);
    const verify = (await compose("verify_email", { username: "<ann>", link: "https://x.test/#token=t" }))!;
    expect(verify.subject).toBe("Welcome to Acme, <ann>");
    expect(verify.htmlBody).toBe('<p>Hi &lt;ann&gt;, <a href="https://x.test/#token=t">confirm</a></p>');
    expect(verify.textBody).toContain("Hello <ann>,");
    const changed = (await compose("password_changed", { username: "ann" }))!;
    expect(changed.textBody).toBe("ann: new password at Acme.\n");
    expect(changed.subject).toBe("Your Acme password was changed");
  });

  const bad: Array<[string, () => string, string, string]> = [
    ["a missing folder", () => join(root, "nowhere"), "must be a folder", "nowhere"],
    ["a file, not a folder", () => join(folder({ "x.html": "x" }), "x.html"), "must be a folder", "x.html"],
    [
      "an unknown kind",
      () => folder({ "welcome.html": "<p>hi</p>" }),
      "welcome.html is not a template's name",
      "welcome.html",
    ],
    [
      "an unknown part",
      () => folder({ "verify_email.body.txt": "hi" }),
      "verify_email.body.txt is not a template's name",
      "verify_email.body.txt",
    ],
    [
      "an unknown placeholder",
      () => folder({ "verify_email.text.txt": "{{username}} {{token}} {{link}}" }),
      "verify_email.text.txt uses {{token}}, which a verify_email mail does not have",
      "verify_email.text.txt",
    ],
    [
      "a placeholder of another kind",
      () => folder({ "password_changed.html": "<p>{{link}}</p>" }),
      "password_changed.html uses {{link}}",
      "password_changed.html",
    ],
    [
      "a placeholder left open",
      () => folder({ "password_reset.html": "<p>{{username</p> {{link}}" }),
      "password_reset.html has a {{ or }} that is not a placeholder",
      "password_reset.html",
    ],
    [
      "a subject of two lines",
      () => folder({ "email_changed.subject.txt": "Changed\nfor {{username}}" }),
      "email_changed.subject.txt must render to one line",
      "email_changed.subject.txt",
    ],
    [
      "an empty body",
      () => folder({ "email_changed.text.txt": "  \n" }),
      "email_changed.text.txt renders to nothing",
      "email_changed.text.txt",
    ],
    [
      "a body without its link",
      () => folder({ "email_change.html": "<p>Hello {{username}}</p>" }),
      "email_change.html leaves out {{link}}",
      "email_change.html",
    ],
    [
      "a file that is not UTF-8",
      () => folder({ "verify_email.text.txt": new Uint8Array([0xff, 0xfe, 0x7b]) }),
      "verify_email.text.txt cannot be read as UTF-8",
      "verify_email.text.txt",
    ],
  ];

  for (const [what, make, message, file] of bad)
    test(`${what} stops start-up with one line naming the file`, () => {
      const dir = make();
      const text = refusal(dir);
      expect(text).toStartWith(`SVC_MAIL_TEMPLATES: ${message}`);
      expect(text).toContain(file);
      expect(text).not.toContain("\n");
    });

  test("svc serve exits 2 with that line", async () => {
    const dir = folder({ "verify_email.text.txt": "{{nope}}" });
    const { code, out, err } = await captureCli(["serve"], { SVC_MAIL_TEMPLATES: dir });
    expect({ code, out }).toEqual({ code: 2, out: "" });
    expect(err).toStartWith("svc: SVC_MAIL_TEMPLATES: verify_email.text.txt uses {{nope}}");
    expect(err).toContain(join(dir, "verify_email.text.txt"));
    expect(err.trim().split("\n")).toHaveLength(1);
  });
});
