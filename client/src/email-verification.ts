// E-mail verification's calls, joined to the client's `auth` (client.ts): the token from a verification
// mail's link redeemed, and a new link asked for.
import type { Auth, Me } from "./auth.js";
import { answerOf, type Call, type Http } from "./http.js";
import type { components, operations } from "./openapi.generated.js";

/** The one answer a resend gets, whatever happened (so that it tells nobody which addresses have accounts). */
export type VerificationResend = components["schemas"]["VerificationResend"];
export type EmailVerification = operations["verifyEmail"]["requestBody"]["content"]["application/json"];
export type VerificationResendRequest = NonNullable<
  operations["resendVerification"]["requestBody"]
>["content"]["application/json"];

const VERIFY = "/svc-api/v1/auth/email/verify";

export interface EmailVerificationCalls {
  /**
   * Redeems the token from a verification mail's link (its `#token=…` fragment): the address is verified.
   * When this client is signed in as that user, the session's user shows it at once. The token alone (a
   * string) is taken too. invalid_mail_token, mail_token_expired.
   */
  verifyEmail(input: EmailVerification | string): Promise<Me>;
  /**
   * Asks for a new link (earlier ones stop working): signed in, for your own address; with `email` and no
   * session, while svc requires verification (SVC_EMAIL_VERIFICATION=required). Throttled (429).
   */
  resendVerification(input?: VerificationResendRequest): Promise<VerificationResend>;
}

export function emailVerificationCalls(http: Http, auth: Auth): EmailVerificationCalls {
  return {
    async verifyEmail(input) {
      const body = { token: typeof input === "string" ? input : input.token };
      const me = await answerOf<Me>(await http.send({ method: "POST", path: VERIFY, body }, null));
      auth.updated(me);
      return me;
    },
    async resendVerification(input) {
      // By address (no session) only when one is given; else as the signed-in account.
      const email = input?.email;
      const call: Call = { method: "POST", path: `${VERIFY}/resend`, ...(email !== undefined && { body: { email } }) };
      const response = email !== undefined ? await http.send(call, null) : await auth.authorized(call);
      return answerOf<VerificationResend>(response);
    },
  };
}
