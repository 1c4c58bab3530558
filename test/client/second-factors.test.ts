// @svc/client's two-step login against the app in process (docs/client/second-factors.md): login answers the
// second step as a typed result, verifyMfa completes it with a code or a recovery code, stepUp shows a factor
// for the session. Passkeys need a browser's authenticator: test/e2e/second-factors-browser.test.ts.
import { describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import { createClient, SvcError, type MfaChallenge } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";
import { signedIn } from "../support/signed-in.ts";

type App = Awaited<ReturnType<typeof testApp>>;
const clientOf = (app: App) =>
  createClient({
    baseUrl: "http://localhost",
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => app.app.handle(new Request(input, init))) as typeof fetch,
  });

describe("@svc/client second factors", () => {
  test("login answers the second step; verifyMfa completes it with a code or a recovery code; stepUp", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const credentials = { username: "ann", password: ann.password };
    const client = clientOf(app);
    expect(signedIn(await client.auth.login(credentials)).user.username).toBe("ann");

    // The authenticator app: the code of the current 30-second step turns it on.
    const enrolment = await client.auth.enrolTotp();
    expect(enrolment.qr_svg).toContain("<svg");
    const totp = URI.parse(enrolment.otpauth_uri) as TOTP;
    expect(totp.secret.base32).toBe(enrolment.secret);
    const step = Math.floor(Date.now() / 30_000);
    const codeAt = (n: number) => totp.generate({ timestamp: n * 30_000 });
    const { recovery_codes: codes } = await client.auth.confirmTotp(codeAt(step));
    expect(codes).toHaveLength(10);
    const status = await client.auth.mfa();
    expect(status.totp.enabled).toBe(true);
    expect(status.recovery_codes_left).toBe(10);
    expect(status.methods).toEqual(expect.arrayContaining(["totp", "recovery_code"]));

    // The password alone now starts no session.
    const second = clientOf(app);
    const challenge = (await second.auth.login(credentials)) as MfaChallenge;
    // Not toMatchObject with expect.any: Bun 1.4.5's writes the matcher into the object it checks.
    expect([challenge.mfaRequired, typeof challenge.mfaToken, challenge.expiresIn]).toEqual([true, "string", 300]);
    expect(challenge.methods).toEqual(expect.arrayContaining(["totp", "recovery_code"]));
    expect(challenge.webauthn).toBeUndefined();
    expect(second.auth.session).toBeNull();
    // The code that turned the app on was used: refused (RFC 6238 §5.2); the next step's is taken.
    const replayed = await failure<SvcError>(
      second.auth.verifyMfa({ mfaToken: challenge.mfaToken, code: codeAt(step) }),
    );
    expect(replayed).toMatchObject({ status: 401, code: "invalid_mfa_code" });
    const session = await second.auth.verifyMfa({ mfaToken: challenge.mfaToken, code: codeAt(step + 1) });
    expect(session).toMatchObject({ mfaRequired: false, mode: "json", user: { username: "ann" } });
    expect(second.auth.session?.user.username).toBe("ann");
    expect((await second.users.me()).username).toBe("ann");
    const spent = await failure<SvcError>(
      second.auth.verifyMfa({ mfaToken: challenge.mfaToken, code: codeAt(step + 1) }),
    );
    expect(spent).toMatchObject({ status: 401, code: "invalid_mfa_token" });

    // A recovery code, once.
    const third = clientOf(app);
    const again = (await third.auth.login(credentials)) as MfaChallenge;
    expect(
      signedIn(await third.auth.verifyMfa({ mfaToken: again.mfaToken, recoveryCode: codes[0]! })).mfaRequired,
    ).toBe(false);
    expect((await third.auth.mfa()).recovery_codes_left).toBe(9);
    const fourth = clientOf(app);
    const reused = (await fourth.auth.login(credentials)) as MfaChallenge;
    expect(await failure(fourth.auth.verifyMfa({ mfaToken: reused.mfaToken, recoveryCode: codes[0]! }))).toMatchObject({
      status: 401,
      code: "invalid_mfa_code",
    });
    expect(fourth.auth.session).toBeNull();

    // A step-up for the first session, which signed in before the factor was on. A wrong code is the
    // answer, not a refused token: the client sends it once, and one failure is recorded.
    const failedBefore = (await app.store.audit.list({ action: "mfa.failed", limit: 100 })).length;
    expect(await failure(client.auth.stepUp({ code: "000000" }))).toMatchObject({
      status: 401,
      code: "invalid_mfa_code",
    });
    expect((await app.store.audit.list({ action: "mfa.failed", limit: 100 })).length).toBe(failedBefore + 1);
    const stepped = await client.auth.stepUp({ recoveryCode: codes[1]! });
    expect(Date.parse(stepped.step_up_until)).toBeGreaterThan(Date.parse(stepped.mfa_at));
    for (const each of [client, second, third, fourth]) each.close();
  });
});
