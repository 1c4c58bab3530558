// A software authenticator for in-process tests: what a browser and a platform authenticator hand a relying
// party, made with WebCrypto. It makes P-256 (ES256) credentials with a "none" attestation (authenticator
// data with the attested credential data and its COSE key, in CBOR), and signs assertions with a counter it
// increments. A test can make it misbehave as a refusal needs: replay an old counter, answer for another
// origin, spoil the signature, or claim another user.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>;

/** Encodes the few CBOR shapes WebAuthn needs here (RFC 8949): integers, byte and text strings, maps. */
export function cbor(value: Cbor): Uint8Array<ArrayBuffer> {
  const head = (major: number, length: number): number[] => {
    const type = major << 5;
    if (length < 24) return [type | length];
    if (length < 0x100) return [type | 24, length];
    if (length < 0x10000) return [type | 25, length >> 8, length & 0xff];
    return [type | 26, (length >>> 24) & 0xff, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff];
  };
  if (typeof value === "number") return new Uint8Array(value >= 0 ? head(0, value) : head(1, -1 - value));
  if (typeof value === "string") {
    const bytes = new TextEncoder().encode(value);
    return concat(new Uint8Array(head(3, bytes.length)), bytes);
  }
  if (value instanceof Uint8Array) return concat(new Uint8Array(head(2, value.length)), value);
  const parts: Uint8Array[] = [new Uint8Array(head(5, value.size))];
  for (const [key, item] of value) parts.push(cbor(key), cbor(item));
  return concat(...parts);
}

export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const b64url = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(new Uint8Array(bytes)).toString("base64url");
const sha256 = async (bytes: Uint8Array<ArrayBuffer>) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const uint32 = (n: number) => new Uint8Array([(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

/** Authenticator data flags (WebAuthn §6.1). */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

/** WebCrypto's ECDSA signature (r || s, 32 bytes each) as the DER SEQUENCE WebAuthn carries. */
function derSignature(raw: Uint8Array): Uint8Array<ArrayBuffer> {
  const integer = (part: Uint8Array) => {
    let start = 0;
    while (start < part.length - 1 && part[start] === 0) start++;
    const trimmed = part.slice(start);
    // A leading high bit would read as negative: a zero byte before it.
    const body = trimmed[0]! & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed;
    return concat(new Uint8Array([0x02, body.length]), body);
  };
  const r = integer(raw.slice(0, 32));
  const s = integer(raw.slice(32, 64));
  return concat(new Uint8Array([0x30, r.length + s.length]), r, s);
}

export interface StoredCredential {
  /** base64url */
  id: string;
  rpId: string;
  /** base64url, as the registration options' user.id carried it. */
  userHandle: string;
  keys: CryptoKeyPair;
  counter: number;
}

export interface AssertOptions {
  /** Which of the held credentials answers; default: the first allowed (or the first for the rp). */
  credentialId?: string;
  /** The origin the "browser" reports; default the authenticator's. */
  origin?: string;
  /** Sign with this counter instead of the next one (the stored counter is left as it is). */
  counter?: number;
  /** Send this user handle instead of the credential's. */
  userHandle?: string | null;
  /** Spoil the signature. */
  badSignature?: boolean;
  /** Answer this challenge instead of the options'. */
  challenge?: string;
  /** Report the user present but not verified (a security key without a PIN). */
  presenceOnly?: boolean;
}

export interface RegisterOptions {
  origin?: string;
  transports?: string[];
  /** Answer this challenge instead of the options'. */
  challenge?: string;
  /** Attest this held credential (its id and key) again instead of making one, ignoring excludeCredentials. */
  reuse?: string;
}

/** What a browser throws when an excluded credential is on the authenticator. */
export class InvalidStateError extends Error {
  override name = "InvalidStateError";
}

export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];

  /** `origin`: the page the "browser" runs on, as its clientDataJSON says. */
  constructor(readonly origin: string) {}

  /** navigator.credentials.create: a new credential for the options, with a "none" attestation. */
  async register(
    options: PublicKeyCredentialCreationOptionsJSON,
    { origin = this.origin, transports = ["internal"], challenge = options.challenge, reuse }: RegisterOptions = {},
  ): Promise<RegistrationResponseJSON> {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    const reused = reuse === undefined ? undefined : this.credentials.find((c) => c.id === reuse);
    if (reuse !== undefined && !reused) throw new Error("no such credential on this authenticator");
    if (!reused && this.credentials.some((c) => c.rpId === rpId && excluded.has(c.id)))
      throw new InvalidStateError("a credential in excludeCredentials is on this authenticator");
    const keys =
      reused?.keys ??
      ((await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
        "sign",
        "verify",
      ])) as CryptoKeyPair);
    const jwk = await crypto.subtle.exportKey("jwk", keys.publicKey);
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, new Uint8Array(Buffer.from(jwk.x!, "base64url"))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, "base64url"))],
      ]),
    );
    const credentialId = reused
      ? new Uint8Array(Buffer.from(reused.id, "base64url"))
      : crypto.getRandomValues(new Uint8Array(32));
    const authData = concat(
      await sha256(new TextEncoder().encode(rpId)),
      new Uint8Array([UP | UV | AT]),
      uint32(0),
      new Uint8Array(16), // aaguid: none
      new Uint8Array([credentialId.length >> 8, credentialId.length & 0xff]),
      credentialId,
      coseKey,
    );
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    const clientDataJSON = new TextEncoder().encode(
      JSON.stringify({ type: "webauthn.create", challenge, origin, crossOrigin: false }),
    );
    const id = b64url(credentialId);
    if (!reused) this.credentials.push({ id, rpId, userHandle: options.user.id, keys, counter: 0 });
    return {
      id,
      rawId: id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: transports as RegistrationResponseJSON["response"]["transports"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get: an assertion by a held credential for the options. */
  async assert(
    options: PublicKeyCredentialRequestOptionsJSON,
    given: AssertOptions = {},
  ): Promise<AuthenticationResponseJSON> {
    const origin = given.origin ?? this.origin;
    const rpId = options.rpId ?? new URL(origin).hostname;
    const allowed = options.allowCredentials?.map((c) => c.id);
    const credential = this.credentials.find(
      (c) =>
        c.rpId === rpId &&
        (given.credentialId === undefined ? !allowed?.length || allowed.includes(c.id) : c.id === given.credentialId),
    );
    if (!credential) throw new Error("no credential on this authenticator for these options");
    let counter = given.counter;
    if (counter === undefined) counter = ++credential.counter;
    const authData = concat(
      await sha256(new TextEncoder().encode(rpId)),
      new Uint8Array([given.presenceOnly ? UP : UP | UV]),
      uint32(counter),
    );
    const clientDataJSON = new TextEncoder().encode(
      JSON.stringify({
        type: "webauthn.get",
        challenge: given.challenge ?? options.challenge,
        origin,
        crossOrigin: false,
      }),
    );
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, credential.keys.privateKey, signed),
    );
    if (given.badSignature) raw[10] = raw[10]! ^ 0xff;
    const userHandle = given.userHandle === undefined ? credential.userHandle : given.userHandle;
    return {
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(derSignature(raw)),
        ...(userHandle !== null && { userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
