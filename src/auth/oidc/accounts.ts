// Which account a provider's sign-in is: the one its identity (issuer and subject) is linked to; else an
// account whose verified address the provider also vouches for (linked now); else a new account, as
// SVC_SIGNUP allows. Never the e-mail alone: an address the provider does not say it verified, or that
// svc has not seen verified, links nothing (whoever controls that provider account could take it over).
import { auditEvent, type Origin } from "../../audit/model.ts";
import type { SignupMode } from "../../config/index.ts";
import type { IdentityStore, NewIdentity } from "../../db/identities.ts";
import { NO_PASSWORD } from "../../db/records.ts";
import type { InvitationStore, UserRecord, UserStore } from "../../db/store.ts";
import type { NewUser } from "../../db/users.ts";
import { AppError } from "../../errors/index.ts";
import { newId } from "../../lib/ids.ts";
import { canonicalInvitationCode, invitationDigest } from "../../signup/codes.ts";
import { EMAIL, EMAIL_MAX, USERNAME } from "../../users/rules.ts";
import type { FlowFailureCode } from "./failure-page.ts";
import type { FlowState, ProviderIdentity } from "./flow.ts";

/** A sign-in the account rules refuse, with the code the failure page and a listed return_to receive. */
export class FlowRefusal extends Error {
  constructor(
    readonly code: FlowFailureCode,
    detail: string,
  ) {
    super(detail);
    this.name = "FlowRefusal";
  }
}

export interface AccountDeps {
  users: Pick<UserStore, "findById" | "findByLogin" | "create">;
  identities: IdentityStore;
  invitations: Pick<InvitationStore, "redeem">;
  signup: SignupMode;
  now: () => number;
}

export type Resolved = { user: UserRecord; identityId: string | null; how: "known" | "linked" | "created" };

/** How many numbered usernames are tried (ann, ann2, ann3...) before a random suffix. */
const NUMBERED_TRIES = 5;

export function createAccountResolver({ users, identities, invitations, signup, now }: AccountDeps) {
  const identityOf = (provider: string, identity: ProviderIdentity, userId: string, at: string): NewIdentity => ({
    id: newId(),
    userId,
    provider,
    issuer: identity.issuer,
    subject: identity.subject,
    email: identity.email,
    createdAt: at,
    lastUsedAt: at,
  });

  async function link(provider: string, identity: ProviderIdentity, user: UserRecord, origin: Origin, by: string) {
    const at = new Date(now()).toISOString();
    const event = auditEvent(
      "identity.linked",
      { actor: user.id, target: user.id, origin, detail: { provider, by } },
      at,
    );
    const linked = await identities.link(identityOf(provider, identity, user.id, at), event);
    if (linked === "taken") throw new FlowRefusal("identity_taken", "This sign-in is linked to another account.");
    if (linked === null) throw new FlowRefusal("internal", "The account went while it was being linked.");
    return linked.id;
  }

  async function create(provider: string, identity: ProviderIdentity, flow: FlowState, origin: Origin) {
    if (signup === "closed") throw new FlowRefusal("signup_closed", "Sign-up is closed.");
    const email = addressOf(identity);
    if (email === null) throw new FlowRefusal("oidc_email_missing", "The provider gave no usable e-mail address.");
    // An account made on an address nobody vouched for could be verified by its real owner later (a mailed
    // link, a reset), who would then sign in to an account whose maker keeps a way in: none is made.
    if (!identity.emailVerified)
      throw new FlowRefusal("oidc_email_unverified", "The provider has not verified this e-mail address.");
    const code = signup === "invite" ? canonicalInvitationCode(flow.invitation ?? "") : null;
    if (signup === "invite" && flow.invitation === undefined)
      throw new FlowRefusal("invitation_required", "Sign-up is by invitation.");
    if (signup === "invite" && code === null)
      throw new FlowRefusal("invalid_invitation", "The invitation is malformed.");
    for (const username of candidateNames(identity, email)) {
      const at = new Date(now()).toISOString();
      const id = newId();
      const user: NewUser = {
        id,
        username,
        email,
        passwordHash: NO_PASSWORD,
        createdAt: at,
        emailVerifiedAt: at,
      };
      const created = auditEvent(
        "user.created",
        {
          actor: id,
          target: id,
          origin,
          detail: { role: "user", provider, email_verified: true },
        },
        at,
      );
      const linked = identityOf(provider, identity, id, at);
      try {
        if (code === null) return { user: await users.create(user, created, undefined, linked), identityId: linked.id };
        const redeemed = auditEvent("invitation.redeemed", { actor: id, origin }, at);
        const made = await invitations.redeem(invitationDigest(code), user, { created, redeemed }, undefined, linked);
        if (made === "invalid") throw new FlowRefusal("invalid_invitation", "The invitation cannot be used.");
        return { user: made, identityId: linked.id };
      } catch (error) {
        if (error instanceof AppError && error.code === "username_taken") continue;
        if (error instanceof AppError && error.code === "email_taken")
          throw new FlowRefusal("email_taken", "An account with this e-mail address exists.");
        // Two first sign-ins of one identity at once: the other made the account.
        if (error instanceof AppError && error.code === "identity_taken")
          throw new FlowRefusal("identity_taken", "This sign-in was linked to an account meanwhile.");
        throw error;
      }
    }
    throw new FlowRefusal("internal", "No free username was found.");
  }

  return {
    /** The account `identity` signs in to (linking or creating one as the rules allow); throws FlowRefusal. */
    async resolve(provider: string, identity: ProviderIdentity, flow: FlowState, origin: Origin): Promise<Resolved> {
      const known = await identities.find(identity.issuer, identity.subject);
      if (flow.linkUserId !== undefined) {
        const user = await users.findById(flow.linkUserId);
        if (!user) throw new FlowRefusal("internal", "The account to link to is gone.");
        // Disabled since its ticket: refused before anything is linked.
        if (user.status !== "active") throw new FlowRefusal("account_disabled", "The account is disabled.");
        if (known) {
          if (known.userId !== user.id) throw new FlowRefusal("identity_taken", "Linked to another account.");
          return { user, identityId: known.id, how: "known" };
        }
        return { user, identityId: await link(provider, identity, user, origin, "request"), how: "linked" };
      }
      if (known) {
        const user = await users.findById(known.userId);
        if (user) return { user, identityId: known.id, how: "known" };
      }
      // Only a well-formed address is looked up, and as an address: a claim such as "admin" would otherwise
      // name an account by its username.
      const address = addressOf(identity);
      const holder = address === null ? null : await users.findByLogin(address);
      if (holder) {
        // Both must vouch for the address: the provider now, and svc before (a link redeemed, or an administrator).
        if (!identity.emailVerified || holder.emailVerifiedAt === null)
          throw new FlowRefusal("email_taken", "An account with this e-mail address exists.");
        // Refused before linking: a refused sign-in leaves nothing behind.
        if (holder.status !== "active") throw new FlowRefusal("account_disabled", "The account is disabled.");
        return {
          user: holder,
          identityId: await link(provider, identity, holder, origin, "verified_email"),
          how: "linked",
        };
      }
      try {
        const made = await create(provider, identity, flow, origin);
        return { ...made, how: "created" };
      } catch (error) {
        // Two first sign-ins of one identity at once: the one that lost signs in to the account the other made.
        const clash = error instanceof FlowRefusal && (error.code === "identity_taken" || error.code === "email_taken");
        const meanwhile = clash ? await identities.find(identity.issuer, identity.subject) : null;
        const user = meanwhile && (await users.findById(meanwhile.userId));
        if (!meanwhile || !user) throw error;
        return { user, identityId: meanwhile.id, how: "known" };
      }
    },
  };
}

/** The provider's address, lower-cased, when it is one svc would keep; null otherwise. */
function addressOf(identity: ProviderIdentity): string | null {
  const email = identity.email?.toLowerCase() ?? null;
  return email !== null && email.length <= EMAIL_MAX && EMAIL.test(email) ? email : null;
}

/** Usernames to try for a new account: the provider's preferred name (or the address's local part), then numbered. */
export function* candidateNames(identity: ProviderIdentity, email: string): Generator<string> {
  const source = identity.preferredUsername ?? email.split("@")[0]!;
  let base = source.replace(/[^A-Za-z0-9_.-]+/g, "").slice(0, 28);
  if (base.length < 3) base = `user${base}`;
  if (USERNAME.test(base)) yield base;
  for (let n = 2; n < 2 + NUMBERED_TRIES; n++) yield `${base.slice(0, 28)}${n}`;
  for (let tries = 0; tries < 5; tries++) yield `${base.slice(0, 24)}-${crypto.randomUUID().slice(0, 6)}`;
}
