// The users routes: your own account, other users, and every page of the list.
import type { Auth, Me } from "./auth.js";
import type { components, operations } from "./openapi.generated.js";
import { problemError } from "./errors.js";
import { MeChanged } from "./errors-precondition.js";
import { answerOf, type Call, type Http, linkOf } from "./http.js";
import { type Paged, pagedOver } from "./paged.js";

export type User = components["schemas"]["User"];
/** `invitation`: the code an administrator issued, where svc takes sign-ups by invitation (SVC_SIGNUP=invite). */
export type NewUser = { username: string; email: string; password: string; invitation?: string };
export type UserChanges = { username?: string; email?: string; current_password?: string };
/**
 * current_password is required, but for an account that has no password (made through an OpenID provider):
 * its first one is set without, within 5 minutes of signing in (else 403 recent_sign_in_required).
 */
export type PasswordChange = { current_password?: string; new_password: string };
/** 202 to a change of address while svc sends mail: it waits for the link mailed to the new address. */
export type PendingEmailChange = components["schemas"]["PendingEmailChange"];
/** Your record as it stands; with `pending_email` when a new address waits for its link's confirmation. */
export type UpdatedMe = Me & Partial<Pick<PendingEmailChange, "pending_email">>;
export type EmailChangeConfirmation = operations["confirmEmailChange"]["requestBody"]["content"]["application/json"];

/**
 * Holds a write to the version of your record you read: `true`, the ETag me() or update() last answered (for
 * the session's user); a string, that ETag. Refused because the record changed since: `MeChanged` (412).
 */
export interface IfMatch {
  ifMatch?: true | string;
}

const USERS = "/svc-api/v1/users";

/** Every user, page by page: `for await (const user of list)` walks them all; `.pages()` gives each page. */
export type UserList = Paged<User>;

/** Which page of users.page: from the start, `after` a user's id or `before` one (not both); `count` for the total. */
export interface UserPageQuery {
  limit?: number;
  after?: string;
  before?: string;
  count?: boolean;
}

/** One page of the user list (oldest first), and the links svc gave to the pages beside it. */
export interface UserPage {
  users: User[];
  /** How many users there are, when the page was asked for with `count: true`; else null. */
  total: number | null;
  /** The next page's URL, for users.page(); null on the last page (or an empty one). */
  next: string | null;
  /** The previous page's URL; null on the first page (or an empty one). */
  prev: string | null;
  /** The first page's URL; null on a page asked for from the start. */
  first: string | null;
}

export class Users {
  readonly #http: Http;
  readonly #auth: Auth;
  /** The ETag of the record me() or update() last answered, and whose it is. */
  #seen: { userId: string; etag: string } | null = null;

  constructor(http: Http, auth: Auth) {
    this.#http = http;
    this.#auth = auth;
  }

  /** Signs up (public unless svc says otherwise); does not sign in: call auth.login next. */
  async create(user: NewUser, options: { idempotencyKey?: string } = {}): Promise<Me> {
    const headers = options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : undefined;
    return answerOf<Me>(await this.#http.send({ method: "POST", path: `${USERS}/create`, body: user, headers }, null));
  }

  async me(): Promise<Me> {
    const response = await this.#auth.authorized({ method: "GET", path: `${USERS}/me` });
    return this.#tagged(await answerOf<Me>(response), response);
  }

  /** The ETag of your record as me() or update() last answered it; null before, or for another user's session. */
  get etag(): string | null {
    const seen = this.#seen;
    return seen !== null && seen.userId === this.#auth.session?.user.id ? seen.etag : null;
  }

  get(id: string): Promise<User> {
    return this.#call<User>({ method: "GET", path: `${USERS}/${encodeURIComponent(id)}` });
  }

  list({ limit }: { limit?: number } = {}): UserList {
    const pages = async function* (this: Users): AsyncGenerator<User[]> {
      let page = await this.page({ limit });
      yield page.users;
      // Each page is asked for once the loop reaches it; Http.send takes no URL to another origin than svc's,
      // where the session's token would go.
      while (page.next !== null) {
        page = await this.page(page.next);
        yield page.users;
      }
    }.bind(this);
    return pagedOver(pages);
  }

  /**
   * One page of the user list: from the start, after or before a user's id, or at a URL of another page's
   * (next, prev, first), so that an app pages both ways. The links keep the limit and `count` asked for.
   */
  async page(at: UserPageQuery | string = {}): Promise<UserPage> {
    const call: Call =
      typeof at === "string"
        ? { method: "GET", path: at }
        : {
            method: "GET",
            path: `${USERS}/all`,
            query: { limit: at.limit, after: at.after, before: at.before, count: at.count ? "true" : undefined },
          };
    const response = await this.#auth.authorized(call);
    const users = await answerOf<User[]>(response);
    const link = response.headers.get("link");
    const total = response.headers.get("x-total-count");
    return {
      users,
      total: total === null ? null : Number(total),
      next: linkOf(link, "next"),
      prev: linkOf(link, "prev"),
      first: linkOf(link, "first"),
    };
  }

  /**
   * Changes your username or e-mail (an e-mail change needs current_password). While svc sends mail, a new
   * address is not yours yet: the answer is your record as it stands (the old address) with `pending_email`,
   * until the link mailed to the new address is opened (confirmEmailChange). With `ifMatch`, only while your
   * record is the version you read (else MeChanged).
   */
  async update(changes: UserChanges, options: IfMatch = {}): Promise<UpdatedMe> {
    const call: Call = { method: "PUT", path: USERS, body: changes };
    const response = await this.#preconditioned(call, options);
    const answer = await answerOf<Me | PendingEmailChange>(response);
    if ("pending_email" in answer) {
      // 202: the record changed, and this answer carries no tag for it.
      this.#seen = null;
      this.#auth.updated(answer.user);
      return { ...answer.user, pending_email: answer.pending_email };
    }
    this.#auth.updated(answer);
    return this.#tagged(answer, response);
  }

  /**
   * Confirms a change of address with the token of the link mailed to the new address (no session needed):
   * the account, with its new address, verified. When signed in as that account, the session's user follows.
   * invalid_mail_token, mail_token_expired; email_taken when another account took the address meanwhile.
   */
  async confirmEmailChange({ token }: EmailChangeConfirmation): Promise<Me> {
    const call = { method: "POST", path: "/svc-api/v1/auth/email/confirm-change", body: { token } } as const;
    const me = await answerOf<Me>(await this.#http.send(call, null));
    this.#auth.updated(me);
    return me;
  }

  /**
   * Changes your password: every other session ends; this one goes on with a new token pair. With `ifMatch`,
   * only while your record is the version you read (else MeChanged).
   */
  async changePassword(change: PasswordChange, options: IfMatch = {}): Promise<void> {
    const call: Call = { method: "PUT", path: `${USERS}/password`, body: change };
    const pair = await answerOf<components["schemas"]["TokenPair"]>(await this.#preconditioned(call, options));
    // The record's updated_at moved: the tag held is no longer its version.
    this.#seen = null;
    await this.#auth.renewed(pair);
  }

  /** Deletes your account; the session ends with it. */
  async delete(): Promise<void> {
    await this.#call<void>({ method: "DELETE", path: USERS });
    await this.#auth.ended();
  }

  async #call<T>(call: Call): Promise<T> {
    return answerOf<T>(await this.#auth.authorized(call));
  }

  /** Your record, its ETag kept for `ifMatch: true`. */
  #tagged<T extends Me>(me: T, response: Response): T {
    const etag = response.headers.get("etag");
    this.#seen = etag === null ? null : { userId: me.id, etag };
    return me;
  }

  /** Sends a write on your record with its If-Match; a 412 to it becomes MeChanged, with the record read again. */
  async #preconditioned(call: Call, { ifMatch }: IfMatch): Promise<Response> {
    if (ifMatch === undefined) return this.#auth.authorized(call);
    const etag = ifMatch === true ? this.etag : ifMatch;
    if (etag === null) throw new TypeError("ifMatch: true needs your record read first (users.me())");
    const response = await this.#auth.authorized({ ...call, headers: { ...call.headers, "if-match": etag } });
    if (response.status !== 412) return response;
    const refusal = await problemError(response);
    const current = await this.me().catch(() => null);
    throw current === null ? refusal : new MeChanged(refusal, current, this.etag);
  }
}
