// The users routes: your own account, other users, and every page of the list.
import type { Auth, Me } from "./auth.js";
import type { components, operations } from "./openapi.generated.js";
import { answerOf, type Call, type Http, linkOf } from "./http.js";

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

const USERS = "/svc-api/v1/users";

/** Every user, page by page: `for await (const user of list)` walks them all; `.pages()` gives each page. */
export interface UserList extends AsyncIterable<User> {
  pages(): AsyncIterable<User[]>;
}

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

  constructor(http: Http, auth: Auth) {
    this.#http = http;
    this.#auth = auth;
  }

  /** Signs up (public unless svc says otherwise); does not sign in: call auth.login next. */
  async create(user: NewUser, options: { idempotencyKey?: string } = {}): Promise<Me> {
    const headers = options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : undefined;
    return answerOf<Me>(await this.#http.send({ method: "POST", path: `${USERS}/create`, body: user, headers }, null));
  }

  me(): Promise<Me> {
    return this.#call<Me>({ method: "GET", path: `${USERS}/me` });
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
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page;
      },
    };
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
   * until the link mailed to the new address is opened (confirmEmailChange).
   */
  async update(changes: UserChanges): Promise<UpdatedMe> {
    const answer = await this.#call<Me | PendingEmailChange>({ method: "PUT", path: USERS, body: changes });
    const me = "pending_email" in answer ? answer.user : answer;
    this.#auth.updated(me);
    return "pending_email" in answer ? { ...me, pending_email: answer.pending_email } : me;
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

  /** Changes your password: every other session ends; this one goes on with a new token pair. */
  async changePassword(change: PasswordChange): Promise<void> {
    const pair = await this.#call<components["schemas"]["TokenPair"]>({
      method: "PUT",
      path: `${USERS}/password`,
      body: change,
    });
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
}
