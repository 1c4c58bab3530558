// @svc/client's auth.verifyEmail and auth.resendVerification against the app in process: the session's
// user shows the verified address at once; a resend by session, and by address while verification is required.
import { describe, expect, test } from "bun:test";
import { createClient, SvcError } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { appVerifying, mailedToken, PASSWORD, signUpOnly, verificationMails } from "../support/verification.ts";
import { signedIn } from "../support/signed-in.ts";

type App = Awaited<ReturnType<typeof testApp>>;
const clientOf = (app: App) =>
  createClient({
    baseUrl: "http://localhost",
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => app.app.handle(new Request(input, init))) as typeof fetch,
  });

describe("@svc/client e-mail verification", () => {
  test("verifyEmail verifies and updates the session's user; resendVerification mails a new link, then 429", async () => {
    const app = await testApp();
    const client = clientOf(app);
    await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
    const session = signedIn(await client.auth.login({ username: "ann", password: PASSWORD }));
    expect(session.user.email_verified).toBe(false);
    expect(await client.auth.resendVerification()).toEqual({ detail: expect.any(String) });
    const refused = await client.auth.resendVerification().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SvcError);
    expect((refused as SvcError).code).toBe("too_many_requests");
    const me = await client.auth.verifyEmail(await mailedToken(app.store, "ann@example.com"));
    expect(me.email_verified).toBe(true);
    expect(client.auth.session?.user.email_verified).toBe(true);
    const again = await client.auth.verifyEmail(await mailedToken(app.store, "ann@example.com")).catch((e) => e);
    expect((again as SvcError).code).toBe("invalid_mail_token");
    client.close();
  });

  test("resendVerification({ email }) without a session, while verification is required", async () => {
    const app = await appVerifying("required");
    await signUpOnly(app, "ann");
    const client = clientOf(app);
    expect(await client.auth.resendVerification({ email: "ann@example.com" })).toEqual({ detail: expect.any(String) });
    expect(await verificationMails(app.store, "ann@example.com")).toHaveLength(2);
    client.close();
  });
});
