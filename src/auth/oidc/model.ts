// Request and answer shapes of the OpenID Connect routes (t schemas), and an identity as its owner sees it.
import { t } from "elysia";
import type { IdentityRecord } from "../../db/store.ts";
import { ref } from "../../http/openapi.ts";

const closed = { additionalProperties: false } as const;

export const identitySchema = t.Object({
  id: t.String({ format: "uuid" }),
  provider: t.String({ description: "The provider's name in SVC_OIDC_PROVIDERS when it was linked." }),
  email: t.Union([t.String(), t.Null()], { description: "The address the provider gave at the last sign-in." }),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const identityListSchema = t.Object({ items: t.Array(ref("Identity")) });

export const providerListSchema = t.Object({
  providers: t.Array(
    t.Object({
      name: t.String(),
      label: t.String({ description: 'What a button says: "Sign in with <label>".' }),
      url: t.String({ description: "Where to send the browser (svc's own path): add ?return_to=… as needed." }),
    }),
  ),
});

export const linkStartSchema = t.Object({
  url: t.String({ description: "Send the browser here (svc's own address, good for 5 minutes) to link the provider." }),
});

export const startQuery = t.Object({
  return_to: t.Optional(
    t.String({
      maxLength: 2048,
      description: "Where the flow ends: svc's own address (default: the console) or one SVC_OIDC_RETURN_URLS lists.",
    }),
  ),
  mode: t.Optional(
    t.Union([t.Literal("cookie"), t.Literal("code")], {
      description: "cookie (default): a cookie session in this browser. code: return_to receives a one-time code.",
    }),
  ),
  invitation: t.Optional(t.String({ maxLength: 128, description: "An invitation code, for sign-up by invitation." })),
  link: t.Optional(t.String({ maxLength: 2048, description: "A link ticket from POST auth/identities/{provider}." })),
});

export const exchangeBody = t.Object(
  { code: t.String({ minLength: 1, maxLength: 256, description: "The one-time code return_to received." }) },
  closed,
);

export const linkBody = t.Object(
  {
    return_to: t.Optional(
      t.String({ maxLength: 2048, description: "Where the flow ends (svc's own address by default)." }),
    ),
  },
  closed,
);

export const identityView = (identity: IdentityRecord) => ({
  id: identity.id,
  provider: identity.provider,
  email: identity.email,
  created_at: identity.createdAt,
  last_used_at: identity.lastUsedAt,
});
