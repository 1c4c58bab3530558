// Checking a passkey's answer (an assertion) as @simplewebauthn/server documents it: the challenge that
// was handed out, the relying party's origin and id, the signature by the stored public key, and a
// counter that moved forward, which the store then records (only forward, so a replay lands once at most).
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  verifyAuthenticationResponse,
} from "@simplewebauthn/server";
import type { PasskeyRecord, PasskeyStore } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import type { RelyingParty } from "./relying-party.ts";

/** Why an answer was refused, for the audit log (never shown to the client, who learns invalid_passkey). */
export type RefusalReason =
  | "malformed_answer"
  | "unknown_credential"
  | "another_users_passkey"
  | "user_handle_mismatch"
  | "challenge_not_live"
  | "verification_failed"
  | "counter_not_forward";

export type AssertionOutcome = { ok: true; passkey: PasskeyRecord } | { ok: false; reason: RefusalReason };

/** The refusal every failed assertion gets: which check failed is not the client's to learn. */
export const invalidPasskey = () =>
  new AppError("invalid_passkey", "The passkey was not accepted; try again with a new sign-in.");

/** The WebAuthn user handle svc gives a user's passkeys: their id's UTF-8 bytes. */
export const userHandle = (userId: string) => new TextEncoder().encode(userId);

/** Whether `value` has the shape of an AuthenticationResponseJSON, enough to hand to the library. */
function assertionShaped(value: unknown): value is AuthenticationResponseJSON {
  if (typeof value !== "object" || value === null) return false;
  const { id, rawId, type, response } = value as Record<string, unknown>;
  if (typeof id !== "string" || typeof rawId !== "string" || type !== "public-key") return false;
  if (typeof response !== "object" || response === null) return false;
  const { clientDataJSON, authenticatorData, signature, userHandle } = response as Record<string, unknown>;
  return (
    typeof clientDataJSON === "string" &&
    typeof authenticatorData === "string" &&
    typeof signature === "string" &&
    (userHandle === undefined || typeof userHandle === "string")
  );
}

/**
 * What a challenge svc hands out can look like: base64url (the library's are 32 random bytes, 43
 * characters), with room to spare. Anything else names none of svc's, and is refused before the database
 * sees it: a NUL, say, PostgreSQL's text cannot even hold.
 */
const CHALLENGE_SHAPE = /^[A-Za-z0-9_-]{16,512}$/;

/** The challenge a browser's answer carries in its clientDataJSON; null when it carries none svc could have made. */
export function answeredChallenge(response: unknown): string | null {
  const clientData = (response as { response?: { clientDataJSON?: unknown } } | null)?.response?.clientDataJSON;
  if (typeof clientData !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientData, "base64url").toString("utf8"));
    const challenge = (parsed as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === "string" && CHALLENGE_SHAPE.test(challenge) ? challenge : null;
  } catch {
    return null;
  }
}

export function assertionChecker(passkeys: PasskeyStore, rp: RelyingParty, now: () => number = Date.now) {
  /**
   * Checks `response` against `expectedChallenge`; with `owner`, it must be one of that user's passkeys.
   * On success the passkey's counter and last use are recorded. `userVerified`: the authenticator must have
   * verified its user (a PIN, a fingerprint), as a passkey that signs in alone must: presence is no factor.
   */
  return async function check(
    response: unknown,
    expectedChallenge: string,
    owner?: string,
    userVerified = false,
  ): Promise<AssertionOutcome> {
    if (!assertionShaped(response)) return { ok: false, reason: "malformed_answer" };
    const passkey = await passkeys.findByCredentialId(response.id);
    if (!passkey) return { ok: false, reason: "unknown_credential" };
    if (owner !== undefined && passkey.userId !== owner) return { ok: false, reason: "another_users_passkey" };
    // A discoverable credential names its user: it must be the passkey's (the library does not look).
    const handle = response.response.userHandle;
    if (handle && handle !== Buffer.from(userHandle(passkey.userId)).toString("base64url"))
      return { ok: false, reason: "user_handle_mismatch" };
    let newCounter: number;
    try {
      const { verified, authenticationInfo } = await verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: new Uint8Array(Buffer.from(passkey.publicKey, "base64url")),
          counter: passkey.counter,
          transports: passkey.transports as AuthenticatorTransport[],
        },
        // As a second step, after the password, "preferred": a security key without a PIN still serves.
        requireUserVerification: userVerified,
      });
      if (!verified) return { ok: false, reason: "verification_failed" };
      newCounter = authenticationInfo.newCounter;
    } catch (error) {
      // The library throws for a counter that did not move forward, as for every other failed check.
      const message = error instanceof Error ? error.message : "";
      return { ok: false, reason: /counter/i.test(message) ? "counter_not_forward" : "verification_failed" };
    }
    if (!(await passkeys.recordUse(passkey.id, newCounter, new Date(now()).toISOString())))
      return { ok: false, reason: "counter_not_forward" };
    return { ok: true, passkey };
  };
}

export type AssertionCheck = ReturnType<typeof assertionChecker>;
