// The vocabulary of svc's OpenAPI document: the names of its schemas, `ref(name)` pointing at one, the few
// helpers that make t schemas read well in clients, and the problem+json schema every error answers with.
// The models import these, so this file imports no model (openapi-routes.ts names their schemas).
import { t } from "elysia";
import { ERROR_CODES } from "../errors/index.ts";

/**
 * The names, spelled out rather than read off the registry: schemas that refer to others would
 * otherwise make the registry's type depend on itself. Its Record type holds the registry to exactly these.
 */
export type SchemaName =
  | "User"
  | "Me"
  | "TokenPair"
  | "Login"
  | "Session"
  | "AdminUser"
  | "IssuedReset"
  | "AuditEvent"
  | "Invitation"
  | "IssuedInvitation"
  | "Backups"
  | "BackupSnapshot"
  | "Live"
  | "Ready"
  | "Health"
  | "HealthChecks"
  | "ResetRequested"
  | "PendingEmailChange"
  | "OutboxMail"
  | "VerificationResend"
  | "MfaStatus"
  | "TotpEnrolment"
  | "RecoveryCodes"
  | "MfaChallenge"
  | "StepUp"
  | "MfaWebauthnOptions"
  | "Passkey"
  | "PasskeyList"
  | "PasskeyCreationOptions"
  | "PasskeyRequestOptions"
  | "Identity"
  | "IdentityList"
  | "OidcProviders"
  | "OidcLinkStart"
  | "Problem";

/**
 * The schema keyword holding the message a broken rule is answered with (problem-answers.ts reads it).
 * An extension keyword, as OpenAPI allows in a schema, so that the document stays valid.
 */
export const RULE_MESSAGE = "x-message";

/**
 * An integer as a client reads it. Elysia's t.Integer also takes a numeric string and says so
 * (anyOf string | integer), which typed clients turn into string | number. For schemas that are only
 * described, never validated: responses, and parameters a route checks itself.
 */
export function integer(options: { description?: string; minimum?: number; maximum?: number; default?: number } = {}) {
  return t.Unsafe<number>({ type: "integer", ...options });
}

/**
 * One of the values. Elysia's t.UnionEnum also sets `default` to the first value, and Elysia fills a
 * default into a request body that left the field out: `PATCH {status}` would have set the role too.
 */
export function enumOf<const T extends readonly [string, ...string[]]>(
  values: T,
  options: { description?: string } = {},
) {
  const schema = t.UnionEnum(values, options);
  delete (schema as { default?: unknown }).default;
  return schema;
}

/**
 * A schema the document names, by reference: a generated client gets one type for it, and the
 * document one definition. Its TS type is unknown: response schemas are never validated.
 */
export function ref(name: SchemaName) {
  return t.Unsafe<unknown>({ $ref: `#/components/schemas/${name}` });
}

/**
 * A 200 answer holding one page of a list of `item`, keyset-paged: the next page's URL in Link. `newestFirst`:
 * the next page holds older items.
 */
export function pageAnswer(description: string, item: SchemaName, newestFirst = false) {
  const next = newestFirst ? "The next (older) page" : "The next page";
  return {
    status: 200,
    description,
    schema: t.Array(ref(item)),
    headers: { Link: `${next}, as <url>; rel="next", while more remain` },
  };
}

const fieldError = t.Object({ field: t.String(), message: t.String() });
export const problemSchema = t.Object(
  {
    type: t.String({ examples: ["about:blank"] }),
    title: t.String(),
    status: integer(),
    detail: t.String(),
    code: enumOf(ERROR_CODES, { description: "Stable, machine-readable: switch on this." }),
    errors: t.Optional(t.Array(fieldError, { description: "For validation_failed: one entry per bad field." })),
  },
  { description: "RFC 9457 problem details." },
);
