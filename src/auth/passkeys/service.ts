// Passkeys in domain words: registering one (options, then the browser's answer), listing, renaming and
// removing one's own, and signing in with one alone (a discoverable credential: no username typed).
// Knows nothing of HTTP; throws AppError.
import type { MfaVerificationCounter } from "../../observability/metrics.ts";
import {
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { auditEvent, type Origin } from "../../audit/model.ts";
import type { EmailVerification } from "../../config/index.ts";
import { auditNote } from "../../audit/note.ts";
import type { AuditStore, PasskeyStore, UserRecord, UserStore } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import { limitKey } from "../../lib/limit-key.ts";
import { newId } from "../../lib/ids.ts";
import type { Logger } from "../../observability/log.ts";
import { accountDisabled, emailUnverified } from "../../users/sign-in-refusals.ts";
import { userView, type UserView } from "../../users/model.ts";
import type { SessionMode } from "../cookie-session.ts";
import type { ClientInfo, SessionService, TokenPair } from "../sessions.ts";
import type { LoginThrottle } from "../throttle.ts";
import { answeredChallenge, assertionChecker, invalidPasskey, type RefusalReason, userHandle } from "./assertion.ts";
import { DEFAULT_PASSKEY_NAME, passkeyName, passkeyView, type PasskeyView } from "./model.ts";
import type { ClientLimit } from "./options-limit.ts";
import type { RelyingParty } from "./relying-party.ts";

/** How long a challenge handed out may be answered. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** The transports WebAuthn names (Level 3): anything else a browser reports is not kept. */
const TRANSPORTS = ["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"] as const;
/** What the browser is told to allow for answering (it only bounds the prompt; the challenge's life is above). */
const PROMPT_TIMEOUT_MS = 60_000;

export interface PasskeyServiceDeps {
  passkeys: PasskeyStore;
  users: UserStore;
  audit: AuditStore;
  sessions: SessionService;
  throttle: LoginThrottle;
  /** Sign-in options per client (they need no token, and each keeps a challenge). */
  optionsLimit: ClientLimit;
  rp: RelyingParty;
  logger: Logger;
  /** SVC_EMAIL_VERIFICATION: with required, an unverified account cannot sign in, by passkey neither. */
  emailVerification?: EmailVerification;
  /** svc_mfa_verifications_total: a sign-in with a passkey alone is a passkey verified (or refused). */
  counted?: MfaVerificationCounter;
  now?: () => number;
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;

export function createPasskeyService({
  passkeys,
  users,
  audit,
  sessions,
  throttle,
  optionsLimit,
  rp,
  logger,
  emailVerification = "off",
  counted = () => {},
  now = Date.now,
}: PasskeyServiceDeps) {
  const iso = (ms: number) => new Date(ms).toISOString();
  const check = assertionChecker(passkeys, rp, now);
  const registrationFailed = (detail = "The passkey could not be registered; ask for new options and try again.") =>
    new AppError("passkey_registration_failed", detail);
  const notFound = () => new AppError("not_found", "You have no passkey with this id.");
  /** An event that goes with no change (a refused sign-in). */
  const note = auditNote(audit, logger);

  /** Keeps a challenge for 5 minutes. */
  async function handOut(challenge: string, purpose: "register" | "sign_in", userId: string | null) {
    const at = now();
    await passkeys.createChallenge({
      id: newId(),
      userId,
      purpose,
      challenge,
      createdAt: iso(at),
      expiresAt: iso(at + CHALLENGE_TTL_MS),
    });
  }

  /** Takes the challenge the answer carries, once; null: not one handed out for this, or no longer live. */
  async function takeAnswered(response: unknown, purpose: "register" | "sign_in", userId: string | null) {
    const challenge = answeredChallenge(response);
    if (challenge === null) return null;
    return (await passkeys.takeChallenge(challenge, purpose, userId, iso(now())))?.challenge ?? null;
  }

  /** What the library found in an answer to registration options; throws passkey_registration_failed. */
  async function verifiedRegistration(response: RegistrationResponseJSON, challenge: string) {
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verification = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        // The options ask for "preferred": a security key without a PIN may still be registered.
        requireUserVerification: false,
      });
    } catch (error) {
      const reason = error instanceof Error ? `: ${error.message}` : "";
      throw registrationFailed(`The passkey could not be registered${reason}`);
    }
    if (!verification.verified) throw registrationFailed();
    const info = verification.registrationInfo;
    // The answer's id is the browser's word; the attestation's is what was signed: they must agree.
    if (info.credential.id !== response.id) throw registrationFailed();
    return info;
  }

  return {
    /** Options for making a passkey: a discoverable credential, not one the user has already. */
    async registrationOptions(user: UserRecord): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const existing = await passkeys.list(user.id);
      const options = await generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: user.username,
        userDisplayName: user.username,
        userID: userHandle(user.id),
        timeout: PROMPT_TIMEOUT_MS,
        attestationType: "none",
        excludeCredentials: existing.map((passkey) => ({
          id: passkey.credentialId,
          transports: passkey.transports as AuthenticatorTransport[],
        })),
        authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
      });
      await handOut(options.challenge, "register", user.id);
      return options;
    },

    /** Checks the browser's answer to this user's registration options and keeps the passkey. */
    async register(
      user: UserRecord,
      response: unknown,
      name: string | undefined,
      origin: Origin,
    ): Promise<PasskeyView> {
      const given = passkeyName(name ?? DEFAULT_PASSKEY_NAME);
      const challenge = await takeAnswered(response, "register", user.id);
      if (challenge === null)
        throw registrationFailed("These options were used already, expired, or not yours; ask for new ones.");
      const info = await verifiedRegistration(response as RegistrationResponseJSON, challenge);
      const at = iso(now());
      const transports = (response as RegistrationResponseJSON).response?.transports;
      const passkey = {
        id: newId(),
        userId: user.id,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString("base64url"),
        counter: info.credential.counter,
        transports: Array.isArray(transports) ? TRANSPORTS.filter((known) => transports.includes(known)) : [],
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        name: given,
        createdAt: at,
        lastUsedAt: null,
      };
      const added = await passkeys.add(
        passkey,
        auditEvent(
          "passkey.added",
          { actor: user.id, target: user.id, origin, detail: { passkey_id: passkey.id, name: given } },
          at,
        ),
      );
      if (added === "taken") throw registrationFailed("This passkey is registered already.");
      // The account went while its answer was checked.
      if (added === null) throw new AppError("unauthorized", "The account is gone.");
      return passkeyView(added);
    },

    async list(user: UserRecord): Promise<{ items: PasskeyView[] }> {
      return { items: (await passkeys.list(user.id)).map(passkeyView) };
    },

    async rename(user: UserRecord, id: string, name: string, origin: Origin): Promise<PasskeyView> {
      const given = passkeyName(name);
      const event = auditEvent("passkey.renamed", {
        actor: user.id,
        target: user.id,
        origin,
        detail: { passkey_id: id, name: given },
      });
      const renamed = await passkeys.rename(user.id, id, given, event);
      if (!renamed) throw notFound();
      return passkeyView(renamed);
    },

    async remove(user: UserRecord, id: string, origin: Origin): Promise<void> {
      const event = auditEvent("passkey.removed", {
        actor: user.id,
        target: user.id,
        origin,
        detail: { passkey_id: id },
      });
      const removed = await passkeys.remove(user.id, id, event);
      if (removed === "last")
        throw new AppError(
          "last_sign_in_method",
          "This passkey is the account's last way to sign in: set a password or link a provider first.",
        );
      if (!removed) throw notFound();
    },

    /** Options for signing in with a discoverable passkey: no user named, the browser offers what it holds. */
    async signInOptions(client: ClientInfo): Promise<PublicKeyCredentialRequestOptionsJSON> {
      await optionsLimit.attempt(client.address);
      const options = await generateAuthenticationOptions({
        rpID: rp.id,
        timeout: PROMPT_TIMEOUT_MS,
        // Alone, the passkey is the whole sign-in: its user must be verified on the authenticator.
        userVerification: "required",
      });
      await handOut(options.challenge, "sign_in", null);
      return options;
    },

    /**
     * Signs in with a passkey's answer to the sign-in options: a new session, answered as a login. Failures
     * count against the client as failed logins do (cheap to check, hopeless to guess: counted after the fact).
     */
    async signIn(
      response: unknown,
      mode: SessionMode | undefined,
      client: ClientInfo,
    ): Promise<TokenPair & { user: UserView }> {
      const clientKey = `client:${limitKey(client.address)}`;
      await throttle.checkClient(clientKey);
      const refused = async (reason: RefusalReason | "account_gone", target: string | null = null) => {
        counted("webauthn", "failure");
        await throttle.clientFailed(clientKey);
        await note(
          auditEvent("login.failed", { target, origin: client, failed: true, detail: { reason, method: "passkey" } }),
        );
        return invalidPasskey();
      };
      const challenge = await takeAnswered(response, "sign_in", null);
      if (challenge === null) throw await refused("challenge_not_live");
      const outcome = await check(response, challenge, undefined, true);
      if (!outcome.ok) throw await refused(outcome.reason);
      const user = await users.findById(outcome.passkey.userId);
      if (!user) throw await refused("account_gone", outcome.passkey.userId);
      counted("webauthn", "success");
      const denied = (reason: string) =>
        note(
          auditEvent("login.failed", {
            target: user.id,
            origin: client,
            failed: true,
            detail: { reason, method: "passkey" },
          }),
        );
      // As login: only the right credential learns the account is disabled.
      if (user.status !== "active") {
        await denied("account_disabled");
        throw accountDisabled();
      }
      if (emailVerification === "required" && user.emailVerifiedAt === null) {
        await denied("email_unverified");
        throw emailUnverified();
      }
      // A verified passkey is two factors in one (the device, and the PIN or body that unlocks it): it
      // counts as a second factor shown for the step-up, as a code after the password does.
      const started = await sessions.start(user, client, {
        login: true,
        ...(mode && { mode }),
        amr: ["hwk"],
        mfaAt: new Date(now()).toISOString(),
      });
      if (!started) {
        if ((await users.findById(user.id))?.status === "disabled") throw accountDisabled();
        throw await refused("account_gone", user.id);
      }
      return { ...started, user: userView(user, user.id) };
    },
  };
}
