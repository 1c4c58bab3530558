// The bodies the second-factor routes read and the answers they give (docs/second-factors.md), as schemas
// the OpenAPI document names.
import { t, type Static } from "elysia";
import { invalidFields } from "../../errors/index.ts";
import { enumOf, integer } from "../../http/openapi.ts";

const closed = { additionalProperties: false } as const;
const code = t.String({ maxLength: 32, description: "The six digits the authenticator app shows now." });
const recoveryCode = t.String({
  maxLength: 64,
  description: "One of your recovery codes, xxxx-xxxx-xxxx; case, dashes and spaces do not matter.",
});
// The browser's answer is checked by the passkey code: any JSON object here.
const webauthnAnswer = t.Record(t.String(), t.Unknown(), {
  description: "The browser's answer to the WebAuthn options (navigator.credentials.get), as JSON.",
});
const methods = t.Array(enumOf(["totp", "recovery_code", "webauthn"]), {
  description: "What a login's second step accepts for this account.",
});
const recoveryCodes = t.Array(t.String(), {
  description: "Ten one-time recovery codes, shown this once: keep them somewhere safe.",
});

export const confirmTotpBody = t.Object({ code }, closed);
export const removeTotpBody = t.Object(
  {
    code: t.Optional(code),
    password: t.Optional(t.String({ maxLength: 1024, description: "Your password (then a step-up is needed too)." })),
  },
  closed,
);
export const verifyBody = t.Object(
  {
    mfa_token: t.Optional(
      t.String({ maxLength: 128, description: "The login's first step's token; left out for a step-up (Bearer)." }),
    ),
    code: t.Optional(code),
    recovery_code: t.Optional(recoveryCode),
    webauthn: t.Optional(webauthnAnswer),
  },
  closed,
);

export type VerifyInput = Static<typeof verifyBody>;
export type RemoveTotpInput = Static<typeof removeTotpBody>;

/** The one factor a body shows. */
export type ShownFactor =
  | { method: "totp"; code: string }
  | { method: "recovery_code"; code: string }
  | { method: "webauthn"; response: Record<string, unknown> };

/** Exactly one of code, recovery_code and webauthn: the factor shown. */
export function shownFactor(input: VerifyInput): ShownFactor {
  const given = (["code", "recovery_code", "webauthn"] as const).filter((field) => input[field] !== undefined);
  if (given.length !== 1) {
    throw invalidFields([
      { field: given[1] ?? "code", message: "exactly one of code, recovery_code and webauthn is required" },
    ]);
  }
  if (input.code !== undefined) return { method: "totp", code: input.code };
  if (input.recovery_code !== undefined) return { method: "recovery_code", code: input.recovery_code };
  return { method: "webauthn", response: input.webauthn! };
}

export const mfaStatusSchema = t.Object({
  totp: t.Object({
    enabled: t.Boolean({ description: "An authenticator app is on." }),
    pending: t.Boolean({ description: "An enrolment waits for its first code." }),
    confirmed_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  }),
  passkeys: integer({ description: "How many passkeys you have.", minimum: 0 }),
  recovery_codes_left: integer({ description: "Unused recovery codes.", minimum: 0 }),
  methods,
});

export const totpEnrolmentSchema = t.Object({
  secret: t.String({ description: "The base32 secret, for typing into an app by hand." }),
  otpauth_uri: t.String({ description: "otpauth://totp/… for an app to read (SHA-1, 6 digits, 30 s)." }),
  qr_svg: t.String({ description: "The URI as a QR code, an SVG document." }),
});

export const recoveryCodesSchema = t.Object({ recovery_codes: recoveryCodes });

export const mfaChallengeSchema = t.Object({
  mfa_required: t.Literal(true),
  mfa_token: t.String({ description: "Send it to auth/mfa/verify with one factor within expires_in seconds." }),
  methods,
  expires_in: integer({ description: "Seconds the mfa_token lives." }),
  webauthn: t.Optional(
    t.Record(t.String(), t.Unknown(), {
      description: "PublicKeyCredentialRequestOptionsJSON for your passkeys (only when you have some).",
    }),
  ),
});

export const stepUpSchema = t.Object({
  mfa_at: t.String({ format: "date-time", description: "When this session showed its second factor." }),
  step_up_until: t.String({ format: "date-time", description: "Until when sensitive changes need no other." }),
});

export type MfaStatus = Static<typeof mfaStatusSchema>;
export type TotpEnrolment = Static<typeof totpEnrolmentSchema>;
export type MfaChallenge = Static<typeof mfaChallengeSchema>;
export type StepUp = Static<typeof stepUpSchema>;

export const webauthnOptionsSchema = t.Record(t.String(), t.Unknown(), {
  description:
    "PublicKeyCredentialRequestOptionsJSON for one of your passkeys: pass it to navigator.credentials.get (or startAuthentication of @simplewebauthn/browser).",
});
