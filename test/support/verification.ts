// What the e-mail verification tests share: the token a verification mail's link carries (read from the
// outbox, as the mail's recipient would read it), apps with verification required, and accounts signed
// up and verified through the API.
import { expect } from "bun:test";
import type { Store } from "../../src/db/store.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { testApp, testConfig, type ConfigOverrides } from "../helpers.ts";

export const VERIFY = "/svc-api/v1/auth/email/verify";
export const RESEND = "/svc-api/v1/auth/email/verify/resend";
export const PASSWORD = "correct horse battery";

/** The verification mails sent to the address, newest first, their bodies opened (sealed under the tests' secret). */
export async function verificationMails(store: Pick<Store, "mail">, address: string) {
  const mails = await store.mail.list({ recipient: address, limit: 100 });
  const opened = await Promise.all(
    mails.filter((mail) => mail.kind === "verify_email").map((mail) => openBodies(mail, testConfig().jwt.secret)),
  );
  return opened.map((mail) => mail ?? expect.unreachable("a mail not sealed under the tests' secret"));
}

/** The token in the link of the newest verification mail to the address (its fragment, #token=…). */
export async function mailedToken(store: Pick<Store, "mail">, address: string): Promise<string> {
  const [newest] = await verificationMails(store, address);
  expect(newest).toBeDefined();
  const link = /https?:\/\/\S+\/svc\/account\/verify-email#token=([A-Za-z0-9_-]+)/.exec(newest!.textBody);
  expect(link).not.toBeNull();
  return decodeURIComponent(link![1]!);
}

/** An app whose configuration sets SVC_EMAIL_VERIFICATION (and anything else given). */
export function appVerifying(verification: "off" | "optional" | "required", config: ConfigOverrides = {}) {
  return testApp({ config: { ...config, mail: { ...testConfig().mail, verification } } });
}

type App = Awaited<ReturnType<typeof testApp>>;

/** Signs up without logging in (which verification may refuse); the new user as answered. */
export async function signUpOnly(app: App, username: string) {
  const made = await app.call("POST", "/svc-api/v1/users/create", {
    body: { username, email: `${username}@example.com`, password: PASSWORD },
  });
  expect(made.status).toBe(201);
  return made.body as { id: string; email: string; updated_at: string; email_verified: boolean };
}

/** Signs up, verifies through the mailed link, and logs in: a token for an account that may sign in. */
export async function verifiedUser(app: App, username: string) {
  const user = await signUpOnly(app, username);
  const verified = await app.call("POST", VERIFY, { body: { token: await mailedToken(app.store, user.email) } });
  expect(verified.status).toBe(200);
  const login = await app.call("POST", "/svc-api/v1/auth/login", { body: { username, password: PASSWORD } });
  expect(login.status).toBe(200);
  return { user, token: login.body.token as string };
}
