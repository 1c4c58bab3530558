// Request and answer shapes of resets and e-mail changes by mail (t schemas, named in the OpenAPI document).
import { t } from "elysia";
import { ref, RULE_MESSAGE } from "../http/openapi.ts";
import { linkToken } from "./link-tokens.ts";
import { EMAIL, EMAIL_MAX, EMAIL_MESSAGE } from "./rules.ts";

const closed = { additionalProperties: false } as const;

export const resetRequestBody = t.Object(
  {
    email: t.String({
      maxLength: EMAIL_MAX,
      pattern: EMAIL.source,
      [RULE_MESSAGE]: EMAIL_MESSAGE,
      description: "The address of the account; any case.",
    }),
  },
  closed,
);

/** The one answer to every reset request that gets through, whether or not an account has the address. */
export const RESET_REQUESTED = {
  status: "requested",
  message: "If an account has this address, a link to reset its password is on its way; it works for 30 minutes.",
} as const;

export const resetRequestedSchema = t.Object(
  { status: t.Literal("requested"), message: t.String() },
  { description: "The same for every address: whether an account has it is not told." },
);

export const confirmChangeBody = t.Object({ token: linkToken }, closed);

export const pendingEmailChangeSchema = t.Object(
  {
    pending_email: t.String({ description: "The new address: it becomes yours once its mailed link is opened." }),
    user: ref("Me"),
  },
  {
    description:
      "An e-mail change waiting for confirmation. user is your record as it now stands: any other field the request changed (username) is changed already; the e-mail is still the old one.",
  },
);
