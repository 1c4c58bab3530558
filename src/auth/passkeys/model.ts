// Request and answer shapes of the passkey routes (t schemas), and a passkey as its owner sees it.
import { t } from "elysia";
import type { PasskeyRecord } from "../../db/store.ts";
import { invalidFields } from "../../errors/index.ts";
import { ref } from "../../http/openapi.ts";
import { unstorable, UNSTORABLE_MESSAGE } from "../../lib/text.ts";
import { loginBody } from "../../users/model.ts";

const closed = { additionalProperties: false } as const;

export const PASSKEY_NAME_MAX = 64;
export const DEFAULT_PASSKEY_NAME = "Passkey";

const name = t.String({
  maxLength: PASSKEY_NAME_MAX * 2,
  description: `What you call it, 1-${PASSKEY_NAME_MAX} characters after trimming (e.g. "Laptop").`,
});

/** The browser's answer as JSON: @simplewebauthn/server reads it and refuses what does not hold. */
const browserAnswer = (description: string) =>
  t.Object(
    { id: t.String({ maxLength: 1024 }), type: t.String({ maxLength: 32 }) },
    { description, additionalProperties: true },
  );

export const registerBody = t.Object(
  {
    response: browserAnswer(
      "The RegistrationResponseJSON of navigator.credentials.create (startRegistration of @simplewebauthn/browser) for the options of auth/passkeys/options.",
    ),
    name: t.Optional(name),
  },
  closed,
);

export const renameBody = t.Object({ name }, closed);

export const signInBody = t.Object(
  {
    response: browserAnswer(
      "The AuthenticationResponseJSON of navigator.credentials.get (startAuthentication of @simplewebauthn/browser) for the options of auth/passkeys/sign-in/options.",
    ),
    mode: loginBody.properties.mode,
  },
  closed,
);

export const passkeySchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "Its last sign-in or second step; null: never used since it was added.",
  }),
  device_type: t.Union([t.Literal("singleDevice"), t.Literal("multiDevice")], {
    description: "multiDevice: a synced passkey (e.g. in a password manager or a platform's keychain).",
  }),
  backed_up: t.Boolean({ description: "Whether it is backed up (synced) now." }),
  transports: t.Array(t.String(), {
    description: "How the browser said it can reach it: usb, nfc, ble, internal, hybrid.",
  }),
});

export const passkeyListSchema = t.Object({ items: t.Array(ref("Passkey")) });

/** A browser's options, as @simplewebauthn/server makes them: passed on to navigator.credentials as they are. */
export const creationOptionsSchema = t.Object(
  { challenge: t.String(), rp: t.Object({ id: t.Optional(t.String()), name: t.String() }) },
  {
    additionalProperties: true,
    description:
      "PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3): pass it to startRegistration of @simplewebauthn/browser, or decode it for navigator.credentials.create.",
  },
);

export const requestOptionsSchema = t.Object(
  { challenge: t.String(), rpId: t.Optional(t.String()) },
  {
    additionalProperties: true,
    description:
      "PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3): pass it to startAuthentication of @simplewebauthn/browser, or decode it for navigator.credentials.get.",
  },
);

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  device_type: PasskeyRecord["deviceType"];
  backed_up: boolean;
  transports: string[];
}

export function passkeyView(passkey: PasskeyRecord): PasskeyView {
  return {
    id: passkey.id,
    name: passkey.name,
    created_at: passkey.createdAt,
    last_used_at: passkey.lastUsedAt,
    device_type: passkey.deviceType,
    backed_up: passkey.backedUp,
    transports: passkey.transports,
  };
}

/** The name as stored: trimmed, 1-64 characters. Throws validation_failed. */
export function passkeyName(given: string): string {
  const trimmed = given.trim();
  if (unstorable(trimmed)) throw invalidFields([{ field: "name", message: UNSTORABLE_MESSAGE }]);
  if (trimmed.length === 0 || [...trimmed].length > PASSKEY_NAME_MAX)
    throw invalidFields([{ field: "name", message: `must be 1-${PASSKEY_NAME_MAX} characters after trimming` }]);
  return trimmed;
}
