// Second factors' calls for the signed-in user, joined to the client's `auth` (client.ts): the authenticator
// app, recovery codes, passkeys, and the step-up sensitive changes need (docs/second-factors.md). The browser's
// part of a passkey (navigator.credentials, or @simplewebauthn/browser) stays the app's: these take and
// answer the JSON it reads and writes.
import type { Auth } from "./auth.js";
import { answerOf, type Call, type Method } from "./http.js";
import {
  type MfaProof,
  type MfaStatus,
  type Passkey,
  proofBody,
  type RecoveryCodes,
  type StepUp,
  type TotpEnrolment,
  type WebAuthnCreationOptions,
  type WebAuthnRequestOptions,
  type WebAuthnResponse,
} from "./mfa-types.js";

const MFA = "/svc-api/v1/auth/mfa";
const PASSKEYS = "/svc-api/v1/auth/passkeys";

export interface PasskeyCalls {
  /** Options for a new passkey: pass them to `startRegistration({ optionsJSON })`. */
  options(): Promise<WebAuthnCreationOptions>;
  /** Keeps the passkey the browser made (its answer to `options`). passkey_registration_failed. */
  register(response: WebAuthnResponse, name?: string): Promise<Passkey>;
  list(): Promise<Passkey[]>;
  rename(id: string, name: string): Promise<Passkey>;
  /** Needs a step-up (mfa_step_up_required otherwise). */
  remove(id: string): Promise<void>;
}

export interface SecondFactorCalls {
  /** The account's factors: the authenticator app, passkeys, recovery codes left, the methods a login takes. */
  mfa(): Promise<MfaStatus>;
  /** Starts an authenticator app's enrolment (a new one replaces one waiting). mfa_already_enabled. */
  enrolTotp(): Promise<TotpEnrolment>;
  /** Turns the app on with its first code: ten recovery codes, shown this once. invalid_mfa_code. */
  confirmTotp(code: string): Promise<RecoveryCodes>;
  /** Turns the app off with a current code, or the password (and a step-up). invalid_mfa_code. */
  disableTotp(proof: { code: string } | { password: string }): Promise<void>;
  /** Ten new recovery codes; the old ones stop working. Needs a step-up. */
  renewRecoveryCodes(): Promise<RecoveryCodes>;
  /**
   * Shows a second factor for this session: what changing the password or e-mail, and removing a passkey,
   * need within 5 minutes. For a passkey, take the options from `stepUpOptions`.
   */
  stepUp(proof: MfaProof): Promise<StepUp>;
  /** Options for a passkey step-up: pass them to `startAuthentication({ optionsJSON })`. */
  stepUpOptions(): Promise<WebAuthnRequestOptions>;
  readonly passkeys: PasskeyCalls;
}

export function secondFactorCalls(auth: Auth): SecondFactorCalls {
  const send = async <T>(method: Method, path: string, body?: unknown): Promise<T> => {
    const call: Call = { method, path, ...(body !== undefined && { body }) };
    return answerOf<T>(await auth.authorized(call));
  };
  return {
    mfa: () => send("GET", MFA),
    enrolTotp: () => send("POST", `${MFA}/totp`),
    confirmTotp: (code) => send("POST", `${MFA}/totp/confirm`, { code }),
    disableTotp: (proof) => send("DELETE", `${MFA}/totp`, proof),
    renewRecoveryCodes: () => send("POST", `${MFA}/recovery-codes`),
    stepUp: (proof) => send("POST", `${MFA}/verify`, proofBody(proof)),
    stepUpOptions: () => send("POST", `${MFA}/webauthn/options`),
    passkeys: {
      options: () => send("POST", `${PASSKEYS}/options`),
      register: (response, name) => send("POST", PASSKEYS, { response, ...(name !== undefined && { name }) }),
      list: async () => (await send<{ items: Passkey[] }>("GET", PASSKEYS)).items,
      rename: (id, name) => send("PATCH", `${PASSKEYS}/${encodeURIComponent(id)}`, { name }),
      remove: (id) => send("DELETE", `${PASSKEYS}/${encodeURIComponent(id)}`),
    },
  };
}
