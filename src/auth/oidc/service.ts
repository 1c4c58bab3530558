// Signing in through OpenID providers, end to end but for HTTP: a flow's start (where it may end, its sealed
// cookie), its callback (the provider's answer checked, the account found, linked or made, then a session,
// a one-time code or the second step), the code's exchange, and the account's linked identities.
import { auditEvent, type Origin } from "../../audit/model.ts";
import type { EmailVerification } from "../../config/index.ts";
import type { AuditStore, UserRecord } from "../../db/store.ts";
import type { IdentityRecord, IdentityStore } from "../../db/identities.ts";
import { AppError } from "../../errors/index.ts";
import type { Logger } from "../../observability/log.ts";
import { sealUnder, unsealUnder } from "../../lib/sealing.ts";
import type { SecondStep, SignInAnswer } from "../../users/second-step.ts";
import { type UserView, userView } from "../../users/model.ts";
import { newRefreshToken, refreshDigest } from "../refresh-tokens.ts";
import type { ClientInfo, SessionService, TokenPair } from "../sessions.ts";
import { type createAccountResolver, FlowRefusal } from "./accounts.ts";
import type { FlowFailureCode } from "./failure-page.ts";
import { beginFlow, completeFlow, type FlowIntent, OidcFlowError, openFlow, redirectUri } from "./flow.ts";
import type { OidcProviders } from "./providers.ts";
import { DEFAULT_RETURN_PATH, isOwnAddress, type ReturnRules, returnTarget } from "./return-to.ts";

export interface OidcServiceDeps {
  providers: OidcProviders;
  rules: ReturnRules;
  /** The server's secret: flows' cookies and link tickets are sealed under it. */
  secret: string;
  identities: IdentityStore;
  users: { findById(id: string): Promise<UserRecord | null> };
  accounts: ReturnType<typeof createAccountResolver>;
  sessions: SessionService;
  secondStep?: SecondStep;
  audit: AuditStore;
  emailVerification: EmailVerification;
  logger: Logger;
  now: () => number;
}

/** How a flow's callback ends for the browser. */
export type CallbackOutcome =
  /** Signed in with a cookie session: set the cookie from `pair`, go to `to`. */
  | { kind: "session"; to: string; answer: TokenPair & { user: UserView } }
  /** Go to `to` (a one-time code, a second step's token or a linked identity are in it already). */
  | { kind: "redirect"; to: string }
  /** Failed: a page, or `to` with error= when the flow's return_to was an app's listed URL. */
  | { kind: "failed"; code: FlowFailureCode; to: string | null; back: string };

export interface StartQuery {
  return_to?: string;
  mode?: "cookie" | "code";
  invitation?: string;
  /** A link ticket from POST /auth/identities/{provider}. */
  link?: string;
}

const CODE_SECONDS = 60;
const LINK_TICKET_SECONDS = 300;
const LINK_LABEL = "svc oidc link";
const FLOW_REASONS: Record<OidcFlowError["reason"], FlowFailureCode> = {
  provider_error: "oidc_provider_error",
  state_mismatch: "oidc_state_mismatch",
  flow_expired: "oidc_flow_expired",
  invalid_response: "oidc_invalid_response",
};

export function createOidcService(deps: OidcServiceDeps) {
  const { providers, rules, secret, identities, users, accounts, sessions, secondStep, audit, logger, now } = deps;
  const iso = (ms: number) => new Date(ms).toISOString();
  const own = (path: string) => returnTarget(path, "cookie", rules);

  /** The provider, discovered; a first request after start waits for the discovery under way. */
  async function ready(name: string) {
    const state = await providers.settled(name);
    if (!state) throw new AppError("not_found", `No sign-in provider is named ${name}.`);
    if (state.kind !== "ready")
      throw new AppError("oidc_provider_unavailable", `The sign-in provider ${name} cannot be reached right now.`, {
        headers: { "retry-after": "30" },
      });
    return state;
  }

  async function note(event: Parameters<AuditStore["record"]>[0]) {
    try {
      await audit.record(event);
    } catch (error) {
      logger.warn({ err: error, audit: event }, "audit event not recorded");
    }
  }

  /** Where the browser goes with `params` added to `to`'s query (a one-time code, an error). */
  const withQuery = (to: string, params: Record<string, string>) => {
    const url = new URL(to);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.href;
  };

  async function sessionFor(user: UserRecord, mode: "cookie" | "json", client: ClientInfo) {
    const second = secondStep && (await secondStep.challenge(user, mode, "ext"));
    if (second) return second;
    const started = await sessions.start(user, client, { login: true, mode, amr: ["ext"] });
    if (!started) throw new FlowRefusal("account_disabled", "The account changed while signing in.");
    return { ...started, user: userView(user, user.id) };
  }

  return {
    /** The providers a sign-in page offers, in the configured order. */
    offered: () => providers.configured.map(({ name, label }) => ({ name, label })),

    /**
     * The provider's address for the browser and the flow cookie's sealed value; throws AppError before any.
     * `browserUser`: whose svc session the browser's cookie holds (asked only for a link).
     */
    async start(name: string, query: StartQuery, browserUser: () => Promise<string | null>) {
      const state = await ready(name);
      let linkUserId: string | undefined;
      if (query.link !== undefined) {
        const ticket = (await unsealUnder(LINK_LABEL, secret, query.link)) as { user: string; until: number } | null;
        if (!ticket || ticket.until <= now())
          throw new AppError("invalid_oidc_code", "The link request expired; start linking again from your account.");
        // A ticket opened in someone else's browser would make their provider account a way into this one
        // (the attack on account linking): the browser must hold this account's own svc session.
        if ((await browserUser()) !== ticket.user)
          throw new AppError(
            "csrf_refused",
            "Linking continues only in a browser signed in to svc as the account that asked for it (its session cookie).",
          );
        linkUserId = ticket.user;
      }
      const mode = query.mode ?? "cookie";
      const intent: FlowIntent = {
        mode,
        returnTo: returnTarget(query.return_to, mode, rules),
        ...(linkUserId !== undefined && { linkUserId }),
        ...(query.invitation !== undefined && { invitation: query.invitation }),
      };
      return beginFlow(
        state.configuration,
        {
          provider: name,
          scopes: state.provider.scopes,
          redirectUri: redirectUri(rules.publicUrl, name),
          secret,
          now: now(),
        },
        intent,
      );
    },

    /**
     * The end of a flow: `search` is the callback's query (the provider's answer), `sealed` the flow cookie's
     * value. The answer is read at the redirect URI registered (svc's public address), whatever address a
     * proxy handed the request on at: the code's exchange must name that same URI.
     */
    async callback(
      name: string,
      search: string,
      sealed: string | undefined,
      client: ClientInfo,
    ): Promise<CallbackOutcome> {
      const url = new URL(`${redirectUri(rules.publicUrl, name)}${search}`);
      const back = own(DEFAULT_RETURN_PATH);
      let returnTo: string | null = null;
      const fail = async (code: FlowFailureCode, detail: string): Promise<CallbackOutcome> => {
        logger.info({ provider: name, reason: code, detail }, "OpenID sign-in failed");
        await note(
          auditEvent(
            "oidc.failed",
            { origin: client, failed: true, detail: { provider: name, reason: code } },
            iso(now()),
          ),
        );
        // Only an app's listed URL hears of it by error=: svc's own pages show the page instead.
        const toApp = returnTo !== null && !isOwnAddress(new URL(returnTo), rules.publicUrl);
        return { kind: "failed", code, to: toApp ? withQuery(returnTo!, { error: code }) : null, back };
      };
      try {
        const state = providers.state(name);
        const flow = await openFlow(sealed, name, secret, now());
        returnTo = flow.returnTo;
        if (!state) return await fail("oidc_flow_expired", `no provider ${name}`);
        if (state.kind !== "ready") return await fail("oidc_provider_unavailable", state.reason);
        const identity = await completeFlow(state, url, flow);
        const { user, identityId, how } = await accounts.resolve(name, identity, flow, client);
        if (flow.linkUserId !== undefined) return { kind: "redirect", to: withQuery(flow.returnTo, { linked: name }) };
        if (user.status !== "active") return await fail("account_disabled", "account disabled");
        if (deps.emailVerification === "required" && user.emailVerifiedAt === null)
          return await fail("email_unverified", "address unverified");
        // Only a sign-in that goes on counts as the identity's use.
        if (identityId !== null && how === "known") await identities.recordUse(identityId, identity.email, iso(now()));
        const signedIn = { provider: name, how, mode: flow.mode };
        const event = { actor: user.id, target: user.id, origin: client, detail: signedIn };
        await note(auditEvent("oidc.signed_in", event, iso(now())));
        if (flow.mode === "code") {
          // A one-time secret as a refresh token is one (32 random bytes), kept only as its digest.
          const code = newRefreshToken();
          const at = now();
          await identities.issueCode({
            digest: refreshDigest(code),
            userId: user.id,
            amr: ["ext"],
            createdAt: iso(at),
            expiresAt: iso(at + CODE_SECONDS * 1000),
          });
          return { kind: "redirect", to: withQuery(flow.returnTo, { code }) };
        }
        const answer = await sessionFor(user, "cookie", client);
        if ("mfa_required" in answer) {
          // The second step in the fragment, as a login answers it: no server and no Referer sees it; the page
          // completes it. A passkey's options go too (base64url JSON), or a passkey-only account could not.
          const to = new URL(flow.returnTo);
          to.hash = new URLSearchParams({
            mfa_token: answer.mfa_token,
            methods: answer.methods.join(","),
            expires_in: String(answer.expires_in),
            ...(answer.webauthn && { webauthn: Buffer.from(JSON.stringify(answer.webauthn)).toString("base64url") }),
          }).toString();
          return { kind: "redirect", to: to.href };
        }
        return { kind: "session", to: flow.returnTo, answer };
      } catch (error) {
        if (error instanceof OidcFlowError) return fail(FLOW_REASONS[error.reason], error.detail);
        if (error instanceof FlowRefusal) return fail(error.code, error.message);
        if (error instanceof AppError && error.code === "account_disabled")
          return fail("account_disabled", error.message);
        logger.error({ err: error, provider: name }, "OpenID sign-in failed unexpectedly");
        return fail("internal", "unexpected");
      }
    },

    /** Trades a one-time code from a mode=code flow for a session (or its second step), once. */
    async exchange(code: string, client: ClientInfo): Promise<SignInAnswer> {
      const taken = await identities.takeCode(refreshDigest(code), iso(now()));
      const invalid = () =>
        new AppError("invalid_oidc_code", "The sign-in code is wrong, used or expired; sign in again.");
      if (!taken) throw invalid();
      const user = await users.findById(taken.userId);
      if (!user) throw invalid();
      if (user.status !== "active")
        throw new AppError("account_disabled", "This account is disabled; an administrator can enable it.");
      return sessionFor(user, "json", client);
    },

    /** A ticket for the browser to start linking `provider` to the signed-in user's account (POST /auth/identities/{provider}). */
    async linkTicket(userId: string, provider: string, returnTo: string | undefined): Promise<string> {
      await ready(provider);
      const target = returnTarget(returnTo, "cookie", rules);
      // One identity per provider per account: said now, not at the end of a trip through the provider.
      if ((await identities.list(userId)).some((identity) => identity.provider === provider))
        throw new AppError(
          "identity_taken",
          `Your account has an identity at ${provider} already: unlink it first to link another.`,
        );
      const ticket = await sealUnder(LINK_LABEL, secret, { user: userId, until: now() + LINK_TICKET_SECONDS * 1000 });
      const start = new URL(`${rules.publicUrl}/svc-api/v1/auth/oidc/${provider}`);
      start.searchParams.set("link", ticket);
      start.searchParams.set("return_to", target);
      return start.href;
    },

    list: (userId: string): Promise<IdentityRecord[]> => identities.list(userId),

    async unlink(userId: string, provider: string, origin: Origin): Promise<void> {
      const facts = { actor: userId, target: userId, origin, detail: { provider } };
      const event = auditEvent("identity.unlinked", facts, iso(now()));
      const gone = await identities.unlink(userId, provider, event);
      if (gone === "last")
        throw new AppError(
          "last_sign_in_method",
          "This is the account's last way to sign in: set a password or add a passkey first.",
        );
      if (!gone) throw new AppError("not_found", `The account has no identity at ${provider}.`);
    },
  };
}

export type OidcService = ReturnType<typeof createOidcService>;
