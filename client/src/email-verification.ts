// E-mail verification's calls, joined to the client's `auth` (client.ts): the token from a verification
// mail's link redeemed, and a new link asked for.
import type { Auth, Me } from "./auth.js";
import { answerOf, type Call, type Http } from "./http.js";
import type { components } from "./openapi.generated.js";

/** The one answer a resend gets, whatever happened (so that it tells nobody which addresses have accounts). */
export type VerificationResend = components["schemas"]["VerificationResend"];

const VERIFY = "/svc-api/v1/auth/email/verify";

export interface EmailVerificationCalls {
  /**
   * Redeems the token from a verification mail's link (its `#token=…` fragment): the address is verified.
   * When this client is signed in as that user, the session's user shows it at once.
   */
  verifyEmail(token: string): Promise<Me>;
  /**
   * Asks for a new link (earlier ones stop working): signed in, for your own address; with `email` and no
   * session, while svc requires verification (SVC_EMAIL_VERIFICATION=required). Throttled (429).
   */
  resendVerification(input?: { email: string }): Promise<VerificationResend>;
}

export function emailVerificationCalls(http: Http, auth: Auth): EmailVerificationCalls {
  return {
    async verifyEmail(token) {
      const me = await answerOf<Me>(await http.send({ method: "POST", path: VERIFY, body: { token } }, null));
      auth.updated(me);
      return me;
    },
    async resendVerification(input) {
      const call: Call = { method: "POST", path: `${VERIFY}/resend`, ...(input && { body: input }) };
      const response = input ? await http.send(call, null) : await auth.authorized(call);
      return answerOf<VerificationResend>(response);
    },
  };
}
