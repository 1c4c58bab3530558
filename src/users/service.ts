// What can be done with accounts, in domain terms. Knows nothing of HTTP; throws AppError.
import { isCommonPassword } from "../auth/common-passwords.ts";
import { unauthorized } from "../auth/authenticator.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import type { LoginThrottle } from "../auth/throttle.ts";
import type { ClientInfo, SessionService, TokenPair } from "../auth/sessions.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import { nameKey, type UserPage, type UserRecord, type UserStore } from "../db/store.ts";
import { AppError, invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors.ts";
import { newId, parseId } from "../ids.ts";
import {
  userView,
  type ChangePasswordInput,
  type CreateUserInput,
  type LoginInput,
  type UpdateSelfInput,
  type UserView,
} from "./model.ts";
import { emailProblem, fieldProblems, passwordProblem, usernameProblem } from "./rules.ts";

export interface UserServiceDeps {
  users: UserStore;
  passwords: PasswordHasher;
  sessions: SessionService;
  throttle: LoginThrottle;
}

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

export type UserService = ReturnType<typeof createUserService>;

export function createUserService({ users, passwords, sessions, throttle }: UserServiceDeps) {
  async function requirePassword(user: UserRecord, password: string | undefined, field: string): Promise<void> {
    if (password === undefined) throw invalidFields([{ field, message: "is required" }]);
    if (!(await passwords.verify(password, user.passwordHash))) {
      throw new AppError("current_password_mismatch", `${field} does not match.`);
    }
  }

  /** The rules' problems, plus a common password; the list is only consulted for an otherwise valid one. */
  async function newPasswordProblems(field: string, password: string): Promise<FieldError[]> {
    const problems = fieldProblems([[field, password, passwordProblem]]);
    if (problems.length === 0 && (await isCommonPassword(password))) {
      problems.push({ field, message: "is too common: it appears in lists of breached passwords" });
    }
    return problems;
  }

  return {
    async create(input: CreateUserInput): Promise<UserRecord> {
      const problems = [
        ...fieldProblems([
          ["username", input.username, usernameProblem],
          ["email", input.email, emailProblem],
        ]),
        ...(await newPasswordProblems("password", input.password)),
      ];
      if (problems.length > 0) throw invalidFields(problems);
      const now = new Date().toISOString();
      return users.create({
        id: newId(),
        username: input.username,
        email: input.email.toLowerCase(),
        passwordHash: await passwords.hash(input.password),
        createdAt: now,
      });
    },

    /** Checks the password and starts a session; `client.address` also keys the per-client failure limit. */
    async login({ username, password }: LoginInput, client: ClientInfo): Promise<TokenPair & { user: UserView }> {
      const user = await users.findByLogin(username);
      // Unknown names are throttled like accounts, so a block does not reveal who exists either.
      const account = user ? `user:${user.id}` : `login:${nameKey(username)}`;
      const clientKey = `client:${client.address}`;
      // Counted as a failure from here on unless it succeeds: a burst cannot get more guesses checked.
      await throttle.reserve(account, clientKey);
      // An unknown user still costs one argon2id verify, so timing does not reveal who exists.
      const ok = user ? await passwords.verify(password, user.passwordHash) : await passwords.verifyNothing(password);
      if (!user || !ok) throw new AppError("invalid_credentials", "Username or password is incorrect.");
      await throttle.succeeded(account, clientKey);
      // Deleted while its password was checked: as unknown as any other missing account.
      const started = await sessions.start(user, client);
      if (!started) throw new AppError("invalid_credentials", "Username or password is incorrect.");
      return { ...started, user: userView(user, user.id) };
    },

    list(page: UserPage): Promise<UserRecord[]> {
      return users.list(page);
    },

    async get(id: string): Promise<UserRecord> {
      const canonical = parseId(id);
      const user = canonical ? await users.findById(canonical) : null;
      if (!user) throw new AppError("not_found", "No user has this id.");
      return user;
    },

    async updateSelf(caller: UserRecord, input: UpdateSelfInput): Promise<UserRecord> {
      const problems = fieldProblems([
        ["username", input.username, usernameProblem],
        ["email", input.email, emailProblem],
      ]);
      if (problems.length > 0) throw invalidFields(problems);
      const email = input.email?.toLowerCase();
      const emailChanges = email !== undefined && email !== caller.email;
      if (emailChanges || input.current_password !== undefined) {
        await requirePassword(caller, input.current_password, "current_password");
      }
      const patch = {
        ...(input.username !== undefined && { username: input.username }),
        ...(emailChanges && { email }),
      };
      if (Object.keys(patch).length === 0) return caller;
      const updated = await users.update(caller.id, patch, new Date().toISOString(), caller.tokenVersion);
      if (!updated) throw revokedMeanwhile();
      return updated;
    },

    /**
     * Changes the password; every other session ends with it, and the caller's goes on with a new pair
     * (a token from before sessions gets a new session).
     */
    async changePassword(
      caller: UserRecord,
      token: VerifiedToken,
      input: ChangePasswordInput,
      client: ClientInfo,
    ): Promise<TokenPair> {
      const problems = await newPasswordProblems("new_password", input.new_password);
      if (problems.length > 0) throw invalidFields(problems);
      await requirePassword(caller, input.current_password, "current_password");
      const hash = await passwords.hash(input.new_password);
      const renewal = token.sessionId === undefined ? undefined : await sessions.renewal(caller, token.sessionId);
      if (renewal === null) throw revokedMeanwhile();
      // Conditional on the caller's token version (and session): of concurrent changes made with one
      // token only the first lands, and the others find their token revoked by it.
      const at = new Date().toISOString();
      const updated = await users.setPassword(caller.id, hash, at, caller.tokenVersion, renewal?.keep);
      if (!updated) throw revokedMeanwhile();
      const pair = renewal ? await renewal.finish(updated) : await sessions.start(updated, client);
      if (!pair) throw revokedMeanwhile();
      return pair;
    },

    async deleteSelf(caller: UserRecord): Promise<void> {
      if (!(await users.delete(caller.id, caller.tokenVersion))) throw revokedMeanwhile();
    },
  };
}

/**
 * A write on behalf of a token is conditional on the token version it carries: when a password change
 * (or a deletion) landed while the request ran, the token is revoked and the write does not land.
 */
function revokedMeanwhile(): AppError {
  return unauthorized(
    true,
    "The token was revoked while this request ran (the password changed, the session ended, or the account was deleted).",
  );
}

const PAGE_PARAMETERS = new Set(["limit", "after"]);

/** Reads `limit` and `after` from a query string: limit 1-1000 (default 100), after a user id; nothing else. */
export function parsePage(query: Record<string, string | undefined>): UserPage {
  const unknown = Object.keys(query).filter((name) => !PAGE_PARAMETERS.has(name));
  if (unknown.length > 0) throw invalidFields(unknown.map((field) => ({ field, message: UNKNOWN_FIELD })));
  const { limit, after } = query;
  const problems: FieldError[] = [];
  let size = PAGE_DEFAULT;
  if (limit !== undefined) {
    size = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(size >= 1 && size <= PAGE_MAX))
      problems.push({ field: "limit", message: `must be an integer from 1 to ${PAGE_MAX}` });
  }
  const afterId = after === undefined ? undefined : parseId(after);
  if (afterId === null) problems.push({ field: "after", message: "must be a user id" });
  if (problems.length > 0 || afterId === null) throw invalidFields(problems);
  return afterId === undefined ? { limit: size } : { limit: size, after: afterId };
}
