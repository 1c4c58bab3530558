// The shapes of svc's second-factor routes (docs/second-factors.md): the answers as the OpenAPI document
// names them, what the client makes of them (the challenge in camel case, as its session is), and the two
// conversions between them (challengeOf, proofBody). The WebAuthn options are typed here: the document
// carries them as open objects, and browsers and @simplewebauthn/browser take them in WebAuthn Level 3's
// "JSON serialization".
import type { Session } from "./held-session.js";
import type { components } from "./openapi.generated.js";

type Schemas = components["schemas"];

/** What a login's second step (or a step-up) accepts. */
export type MfaMethod = Schemas["MfaChallenge"]["methods"][number];

/** A credential named in WebAuthn options. */
export interface WebAuthnCredentialDescriptor {
  id: string;
  type: "public-key";
  transports?: AuthenticatorTransport[];
}

/** PublicKeyCredentialRequestOptionsJSON: pass it to `startAuthentication({ optionsJSON })`. */
export interface WebAuthnRequestOptions {
  challenge: string;
  timeout?: number;
  rpId?: string;
  allowCredentials?: WebAuthnCredentialDescriptor[];
  userVerification?: UserVerificationRequirement;
  hints?: Array<"hybrid" | "security-key" | "client-device">;
  extensions?: AuthenticationExtensionsClientInputs;
}

/** PublicKeyCredentialCreationOptionsJSON: pass it to `startRegistration({ optionsJSON })`. */
export interface WebAuthnCreationOptions {
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  challenge: string;
  pubKeyCredParams: Array<{ alg: number; type: "public-key" }>;
  timeout?: number;
  excludeCredentials?: WebAuthnCredentialDescriptor[];
  authenticatorSelection?: AuthenticatorSelectionCriteria;
  hints?: Array<"hybrid" | "security-key" | "client-device">;
  attestation?: AttestationConveyancePreference;
  extensions?: AuthenticationExtensionsClientInputs;
}

/**
 * The browser's answer to WebAuthn options, as JSON (what `startRegistration` and `startAuthentication`
 * answer): svc checks it, the client only carries it.
 */
export type WebAuthnResponse = object;

/** The right password of an account with a second factor: no session yet, a second step to take. */
export interface MfaChallenge {
  mfaRequired: true;
  /** For `auth.verifyMfa`: good for `expiresIn` seconds, once, and for 5 wrong codes at most. */
  mfaToken: string;
  methods: MfaMethod[];
  expiresIn: number;
  /** Options for a passkey as the second step: there when the account has passkeys. */
  webauthn?: WebAuthnRequestOptions;
}

/** Signed in: the session, as `auth.session` shows it. */
export type SignedIn = Session & { mfaRequired: false };

/** What `auth.login` answers: signed in, or a second step to take (`auth.verifyMfa`). */
export type LoginResult = SignedIn | MfaChallenge;

/** Exactly one proof: an authenticator app's code, a recovery code, or a passkey's answer. */
export type MfaProof = { code: string } | { recoveryCode: string } | { webauthn: WebAuthnResponse };

/** auth/mfa: the account's factors. */
export type MfaStatus = Schemas["MfaStatus"];

/** An authenticator app's enrolment, waiting for its first code. */
export type TotpEnrolment = Schemas["TotpEnrolment"];

/** Ten one-time codes, shown this once. */
export type RecoveryCodes = Schemas["RecoveryCodes"];

/** A step-up done: when the session showed a factor, and until when it counts. */
export type StepUp = Schemas["StepUp"];

export type Passkey = Schemas["Passkey"];

/** A login's answer for an account with a second factor (docs/second-factors.md). */
export interface SecondStepAnswer {
  mfa_required: true;
  mfa_token: string;
  methods: MfaMethod[];
  expires_in: number;
  webauthn?: WebAuthnRequestOptions;
}

export function challengeOf(answer: SecondStepAnswer): MfaChallenge {
  return {
    mfaRequired: true,
    mfaToken: answer.mfa_token,
    methods: answer.methods,
    expiresIn: answer.expires_in,
    ...(answer.webauthn && { webauthn: answer.webauthn }),
  };
}

/** A proof as svc's routes name it: `code`, `recovery_code` or `webauthn`. */
export function proofBody(proof: MfaProof): Record<string, unknown> {
  if ("code" in proof) return { code: proof.code };
  if ("recoveryCode" in proof) return { recovery_code: proof.recoveryCode };
  return { webauthn: proof.webauthn };
}
