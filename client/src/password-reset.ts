// Password reset by mail, joined to the client's `auth` (client.ts): a link asked for by address, and the
// token from its fragment redeemed for a new password and a new session (auth.redeemReset's route).
import type { Auth } from "./auth.js";
import type { LoginResult } from "./mfa-types.js";
import type { ResetRedemption } from "./held-session.js";
import { answerOf, type Http } from "./http.js";
import type { components, operations } from "./openapi.generated.js";

/** The one answer a request gets, whether or not an account has the address (so that it tells nobody). */
export type ResetRequested = components["schemas"]["ResetRequested"];
export type ResetRequest = operations["requestPasswordReset"]["requestBody"]["content"]["application/json"];
/** A mailed reset link's token (the `#token=…` of its fragment) and the new password. */
export type MailedReset = Extract<ResetRedemption, { token: string }>;

export interface PasswordResetCalls {
  /**
   * Asks svc to mail a reset link to the address (no session needed). The same answer (202) for every
   * address; too many asked for one address or from one client: too_many_requests; mail off: mail_not_configured.
   */
  requestPasswordReset(input: ResetRequest): Promise<ResetRequested>;
  /**
   * Sets a new password with the token of the mailed link, and signs in as redeemReset does (in this
   * client's mode): every other session of the account ends. For an account with a second factor the
   * answer is its second step (`mfaRequired`), completed with auth.verifyMfa. invalid_mail_token,
   * mail_token_expired.
   */
  resetPassword(input: MailedReset): Promise<LoginResult>;
}

export function passwordResetCalls(http: Http, auth: Auth): PasswordResetCalls {
  return {
    async requestPasswordReset({ email }) {
      const call = { method: "POST", path: "/svc-api/v1/auth/password-reset/request", body: { email } } as const;
      return answerOf<ResetRequested>(await http.send(call, null));
    },
    resetPassword: ({ token, new_password }) => auth.redeemReset({ token, new_password }),
  };
}
