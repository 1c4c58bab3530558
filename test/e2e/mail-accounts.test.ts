// The compiled binary's account mail, end to end over HTTP and a real SMTP server (STARTTLS and AUTH, its
// certificate trusted through NODE_EXTRA_CA_CERTS): a sign-up's verification link verifies the address; a
// reset link sets the password; a server refusing at DATA for a while loses no sign-up's mail and sends none
// twice; a binary killed between a sign-up's commit and the mail's delivery sends it once after a restart.
// (test/e2e/mail.test.ts holds mails enqueued by another process; mail-instances.test.ts two instances.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitUntil } from "../support/wait.ts";
import { arrivals, deliveredTo, linkIn, mailSettings, PASSWORD, PUBLIC_URL } from "./support/mail.ts";
import { emptyFolderWithBinary, json, prepareBinary, type Running, start, stop } from "./support/svc.ts";

const API = "/svc-api/v1";
let smtp: TestSmtp;
beforeAll(async () => {
  await prepareBinary();
  smtp = await startSmtp();
}, 300_000);
afterAll(() => smtp?.close());

/** The binary in a folder of its own on SQLite, sending through `smtp`. */
async function startWithMail(dir = emptyFolderWithBinary()): Promise<Running & { dir: string }> {
  const running = await start(dir, { SVC_DATABASE_URL: `sqlite:${dir}/svc.db`, ...mailSettings(smtp, dir) });
  return { ...running, dir };
}

const signUp = (base: string, username: string) =>
  json(base, "POST", `${API}/users/create`, { username, email: `${username}@example.com`, password: PASSWORD });

test("a sign-up over HTTP delivers a verification mail whose link verifies the address", async () => {
  const svc = await startWithMail();
  try {
    const made = await signUp(svc.base, "vera");
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ email: "vera@example.com", email_verified: false });
    await waitUntil(() => deliveredTo(smtp, "vera@example.com").length > 0, { what: "the verification mail" });
    const [mail] = deliveredTo(smtp, "vera@example.com");
    expect(mail!.secure).toBe(true);
    expect(mail!.user).toBe("mailer");
    expect(mail!.from).toBe("acme@example.com");
    expect(mail!.mail.subject).toBe("Confirm your e-mail address for svc");
    expect(mail!.mail.messageId).toMatch(/^<[^@>]+@svc\.example\.com>$/);
    const { link, token } = linkIn(mail!, "/svc/account/verify-email");
    expect(link.origin).toBe(PUBLIC_URL);
    // The link's page is svc's own: the token is in the fragment, which the browser never sends.
    const page = await fetch(`${svc.base}${link.pathname}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    expect(await page.text()).not.toContain(token);

    const login = await json(svc.base, "POST", `${API}/auth/login`, { username: "vera", password: PASSWORD });
    expect(login.status).toBe(200);
    const me = () => json(svc.base, "GET", `${API}/users/me`, undefined, login.body.token);
    expect((await me()).body.email_verified).toBe(false);
    const verified = await json(svc.base, "POST", `${API}/auth/email/verify`, { token });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: made.body.id, email_verified: true });
    expect((await me()).body.email_verified).toBe(true);
    // One-time: the same token again is refused, and the address stays verified.
    const again = await json(svc.base, "POST", `${API}/auth/email/verify`, { token });
    expect(again.status).toBe(400);
    expect((await me()).body.email_verified).toBe(true);
    expect(deliveredTo(smtp, "vera@example.com")).toHaveLength(1);
  } finally {
    expect(await stop(svc)).toBe(0);
  }
}, 60_000);

test("a password reset by mail: the link's token sets the password, and a notice follows", async () => {
  const svc = await startWithMail();
  try {
    expect((await signUp(svc.base, "rhea")).status).toBe(201);
    const asked = await json(svc.base, "POST", `${API}/auth/password-reset/request`, { email: "rhea@example.com" });
    expect(asked.status).toBe(202);
    const resets = () => deliveredTo(smtp, "rhea@example.com").filter((r) => r.mail.subject?.startsWith("Reset"));
    await waitUntil(() => resets().length > 0, { what: "the reset mail" });
    const { token } = linkIn(resets()[0]!, "/svc/account/reset-password");
    const fresh = "a new staple battery horse";
    const reset = await json(svc.base, "POST", `${API}/auth/password-reset`, { token, new_password: fresh });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ token_type: "Bearer", user: { email: "rhea@example.com" } });
    const login = (password: string) => json(svc.base, "POST", `${API}/auth/login`, { username: "rhea", password });
    expect((await login(fresh)).status).toBe(200);
    expect((await login(PASSWORD)).status).toBe(401);
    const used = await json(svc.base, "POST", `${API}/auth/password-reset`, { token, new_password: "yet another one" });
    expect(used.status).toBe(400);
    expect((await login(fresh)).status).toBe(200);
    await waitUntil(() => deliveredTo(smtp, "rhea@example.com").length >= 3, { what: "the password-changed notice" });
    const subjects = deliveredTo(smtp, "rhea@example.com").map((r) => r.mail.subject);
    expect(subjects.sort()).toEqual([
      "Confirm your e-mail address for svc",
      "Reset your svc password",
      "Your svc password was changed",
    ]);
  } finally {
    expect(await stop(svc)).toBe(0);
  }
}, 60_000);

test("a server refusing at DATA for a while, then accepting: every sign-up's mail arrives, none twice", async () => {
  const svc = await startWithMail();
  const names = Array.from({ length: 8 }, (_, i) => `dora${i}`);
  const delivered = () => smtp.received.filter((r) => r.to[0]!.startsWith("dora"));
  try {
    const before = smtp.refusals();
    smtp.refuse("data");
    for (const name of names) expect((await signUp(svc.base, name)).status).toBe(201);
    await waitUntil(() => smtp.refusals() - before >= names.length, { what: "each mail refused at DATA" });
    expect(delivered()).toEqual([]);
    smtp.accept();
    await waitUntil(() => delivered().length >= names.length, {
      what: "the refused mails, retried",
      timeoutMs: 60_000,
    });
    const pending = async () =>
      /svc_mail_outbox_pending\{[^}]*\} 0$/m.test(await (await fetch(`${svc.base}/svc/metrics`)).text());
    await waitUntil(pending, { what: "none pending" });
    const counts = arrivals(delivered());
    expect(counts.size).toBe(names.length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(
      delivered()
        .map((r) => r.to[0])
        .sort(),
    ).toEqual(names.map((n) => `${n}@example.com`).sort());
    // Each retried mail still carries a token that works.
    for (const received of delivered()) {
      const { token } = linkIn(received, "/svc/account/verify-email");
      expect((await json(svc.base, "POST", `${API}/auth/email/verify`, { token })).status).toBe(200);
    }
  } finally {
    smtp.accept();
    expect(await stop(svc)).toBe(0);
  }
}, 120_000);

test("killed (SIGKILL) between a sign-up's commit and its delivery: after a restart the mail arrives once", async () => {
  const first = await startWithMail();
  let second: Running | undefined;
  const mine = () => deliveredTo(smtp, "kim@example.com");
  try {
    const before = smtp.refusals();
    smtp.refuse("rcpt");
    expect((await signUp(first.base, "kim")).status).toBe(201);
    // Committed, tried and not delivered: the mail waits in the outbox when the process dies. The warn line
    // follows the retry's record; killed before it, the claim's 10-minute lease would hold the mail back.
    await waitUntil(() => smtp.refusals() > before, { what: "the first attempt refused" });
    await waitUntil(() => first.output().includes("mail not sent; trying again later"), { what: "the retry recorded" });
    first.proc.kill("SIGKILL");
    expect(await first.proc.exited).toBe(137);
    expect(mine()).toEqual([]);
    smtp.accept();

    second = await startWithMail(first.dir);
    await waitUntil(() => mine().length > 0, { what: "the mail after the restart", timeoutMs: 60_000 });
    const pending = async () =>
      /svc_mail_outbox_pending\{[^}]*\} 0$/m.test(await (await fetch(`${second!.base}/svc/metrics`)).text());
    await waitUntil(pending, { what: "none pending" });
    expect(mine()).toHaveLength(1);
    const { token } = linkIn(mine()[0]!, "/svc/account/verify-email");
    const verified = await json(second.base, "POST", `${API}/auth/email/verify`, { token });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ username: "kim", email_verified: true });
  } finally {
    smtp.accept();
    first.proc.kill("SIGKILL");
    if (second) expect(await stop(second)).toBe(0);
  }
}, 120_000);

test("a certificate svc does not trust gets no mail; trusted through NODE_EXTRA_CA_CERTS, the mail goes out", async () => {
  const dir = emptyFolderWithBinary();
  const { NODE_EXTRA_CA_CERTS: _trusted, ...untrusting } = mailSettings(smtp, dir);
  const first = await start(dir, { SVC_DATABASE_URL: `sqlite:${dir}/svc.db`, ...untrusting });
  let second: Running | undefined;
  const mine = () => deliveredTo(smtp, "tess@example.com");
  try {
    expect((await signUp(first.base, "tess")).status).toBe(201);
    await waitUntil(() => first.output().includes("mail not sent; trying again later"), { what: "the failed attempt" });
    const warning = JSON.parse(
      first
        .output()
        .split("\n")
        .find((l) => l.includes("mail not sent"))!,
    );
    expect(warning.error).toMatch(/certificate/i);
    expect((await (await fetch(`${first.base}/svc/health`)).json()).mail).toBe("failing");
    expect(mine()).toEqual([]);
    expect(await stop(first)).toBe(0);

    second = await startWithMail(dir);
    await waitUntil(() => mine().length > 0, { what: "the mail, once the CA is trusted", timeoutMs: 60_000 });
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.secure).toBe(true);
  } finally {
    first.proc.kill("SIGKILL");
    if (second) expect(await stop(second)).toBe(0);
  }
}, 120_000);
