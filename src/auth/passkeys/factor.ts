// A passkey as a second factor (src/auth/mfa/contracts.ts): options for an assertion by one of the user's
// passkeys, and the check of the answer. The challenge is the second-factor code's to keep (with its
// mfa_token, or the session's step-up) and to spend once; this checks the answer against it.
import { type AuthenticatorTransport, generateAuthenticationOptions } from "@simplewebauthn/server";
import type { PasskeyStore } from "../../db/store.ts";
import type { PasskeyFactor } from "../mfa/contracts.ts";
import { assertionChecker, invalidPasskey } from "./assertion.ts";
import type { RelyingParty } from "./relying-party.ts";

export interface PasskeyFactorDeps {
  passkeys: PasskeyStore;
  rp: RelyingParty;
  now?: () => number;
}

/** How long the browser is told to allow for answering. */
const PROMPT_TIMEOUT_MS = 60_000;

export function createPasskeyFactor({ passkeys, rp, now = Date.now }: PasskeyFactorDeps): PasskeyFactor {
  const check = assertionChecker(passkeys, rp, now);
  return {
    async assertionOptions(userId) {
      const own = await passkeys.list(userId);
      if (own.length === 0) return null;
      const options = await generateAuthenticationOptions({
        rpID: rp.id,
        timeout: PROMPT_TIMEOUT_MS,
        userVerification: "preferred",
        allowCredentials: own.map((passkey) => ({
          id: passkey.credentialId,
          transports: passkey.transports as AuthenticatorTransport[],
        })),
      });
      return { options, challenge: options.challenge };
    },

    async verifyAssertion(userId, response, expectedChallenge) {
      const outcome = await check(response, expectedChallenge, userId);
      if (!outcome.ok) throw invalidPasskey();
    },
  };
}
