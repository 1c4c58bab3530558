// A new password by reset ends where the password's step of a login does: for an account with a second
// factor, the reset sets the password and ends every session, but answers the second step, not a session.
// Otherwise a reset code, or the mailbox a reset link goes to, would be a way past the second factor.
import { describe, expect, test } from "bun:test";
import { expectProblem, promote } from "../helpers.ts";
import { mailedToken } from "../support/mail-links.ts";
import { claims, LOGIN, mfaApp, VERIFY } from "../support/mfa.ts";

const REDEEM = "/svc-api/v1/auth/password-reset";
const NEW_PASSWORD = "a brand new staple";

async function resetApp() {
  const app = await mfaApp();
  const root = await app.signUp("root");
  await promote(app.store, root.user.id);
  const ann = await app.enrolled("ann");
  /** A reset code an administrator issued for ann. */
  const code = async () => {
    const issued = await app.call("POST", `/svc-api/v1/admin/users/${ann.user.id}/password-reset`, {
      token: root.token,
    });
    expect(issued.status).toBe(201);
    return issued.body.reset_code as string;
  };
  /** The token of a reset link mailed to ann. */
  const link = async () => {
    const asked = await app.call("POST", `${REDEEM}/request`, { body: { email: "ann@example.com" } });
    expect(asked.status).toBe(202);
    return (await mailedToken(app.store, "ann@example.com", "password_reset")).token;
  };
  return { ...app, ann, code, link };
}

describe("a password reset on an account with a second factor", () => {
  for (const via of ["an administrator's code", "a mailed link"] as const) {
    test(`by ${via}: the password is set and every session ends, but only the second step starts one`, async () => {
      const app = await resetApp();
      const { ann } = app;
      const body =
        via === "a mailed link"
          ? { token: await app.link(), new_password: NEW_PASSWORD }
          : { username: "ann", reset_code: await app.code(), new_password: NEW_PASSWORD };
      const reset = await app.call("POST", REDEEM, { body });
      expect(reset.status).toBe(200);
      expect(reset.body).toMatchObject({ mfa_required: true, methods: expect.arrayContaining(["totp"]) });
      expect(reset.body.token).toBeUndefined();
      expect(reset.body.refresh_token).toBeUndefined();
      // The reset did its work: the old session is over, the old password refused, the new one asks for a code.
      expectProblem(await app.call("GET", "/svc-api/v1/users/me", { token: ann.token }), 401, "unauthorized");
      expectProblem(
        await app.call("POST", LOGIN, { body: { username: "ann", password: ann.password } }),
        401,
        "invalid_credentials",
      );
      expect((await app.call("POST", LOGIN, { body: { username: "ann", password: NEW_PASSWORD } })).body).toMatchObject(
        { mfa_required: true },
      );
      // A wrong code does not complete it; the app's code does, with amr saying both factors.
      const token = reset.body.mfa_token as string;
      expectProblem(
        await app.call("POST", VERIFY, { body: { mfa_token: token, code: "000000" } }),
        401,
        "invalid_mfa_code",
      );
      const done = await app.call("POST", VERIFY, { body: { mfa_token: token, code: app.codeOf(ann.totp) } });
      expect(done.status).toBe(200);
      expect(done.body.user.id).toBe(ann.user.id);
      expect(claims(done.body.token).amr).toEqual(["pwd", "otp"]);
      expect((await app.call("GET", "/svc-api/v1/auth/sessions", { token: done.body.token })).body).toHaveLength(1);
    });
  }

  test("in cookie mode: no cookie until the second step", async () => {
    const app = await resetApp();
    const reset = await app.call("POST", REDEEM, {
      body: { username: "ann", reset_code: await app.code(), new_password: NEW_PASSWORD, mode: "cookie" },
      headers: { origin: "http://localhost" },
    });
    expect(reset.status).toBe(200);
    expect(reset.body.mfa_required).toBe(true);
    expect(reset.headers.getSetCookie()).toEqual([]);
  });

  test("an account without a second factor is signed in by its reset, as before", async () => {
    const app = await resetApp();
    await app.signUp("bob");
    const asked = await app.call("POST", `${REDEEM}/request`, { body: { email: "bob@example.com" } });
    expect(asked.status).toBe(202);
    const { token } = await mailedToken(app.store, "bob@example.com", "password_reset");
    const reset = await app.call("POST", REDEEM, { body: { token, new_password: NEW_PASSWORD } });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ token_type: "Bearer", user: { username: "bob" } });
    expect(claims(reset.body.token).amr).toEqual(["pwd"]);
  });
});
