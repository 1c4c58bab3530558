// The one bearer check REST and GraphQL share: header → token → live user at the token's version.
import type { UserRecord, UserStore } from "../db/store.ts";
import { AppError } from "../errors.ts";
import type { TokenService } from "./tokens.ts";

export interface Authenticator {
  /** The calling user. Throws AppError `unauthorized` (with WWW-Authenticate) when there is none. */
  authenticate(authorization: string | null): Promise<UserRecord>;
}

const CHALLENGE = 'Bearer realm="svc"';

export function unauthorized(tokenSent: boolean, detail: string): AppError {
  const challenge = tokenSent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE;
  return new AppError("unauthorized", detail, { headers: { "www-authenticate": challenge } });
}

export function createAuthenticator(tokens: TokenService, users: UserStore): Authenticator {
  return {
    async authenticate(authorization) {
      if (!authorization) throw unauthorized(false, "A Bearer token is required.");
      const token = bearerToken(authorization);
      if (token === null) throw unauthorized(true, "The Authorization header must read 'Bearer <token>'.");
      const subject = await tokens.verify(token);
      const user = subject && (await users.findById(subject.userId));
      // A deleted user, or a token from before a password change, is as invalid as a forged one.
      if (!subject || !user || user.tokenVersion !== subject.version) {
        throw unauthorized(true, "The token is invalid, expired or revoked.");
      }
      return user;
    },
  };
}

function bearerToken(authorization: string): string | null {
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(authorization);
  return match ? match[1]! : null;
}
