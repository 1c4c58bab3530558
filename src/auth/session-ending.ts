// The session a logout ends, as the request names it (by the refresh token in its body, by the session
// cookie, or by the Bearer token), whose the request's Idempotency-Key is, and ending it.
import { Elysia } from "elysia";
import type { UserRecord } from "../db/store.ts";
import type { RequestInfo } from "../http/request-context.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import { bySession, type Idempotency, type KeyHolder } from "../http/idempotency.ts";
import type { Authenticator } from "./authenticator.ts";
import { identifier } from "./bearer.ts";
import { cookieRefreshToken } from "./cookie-session.ts";
import { type LogoutScope, logoutRequest } from "./model.ts";
import { refreshDigest } from "./refresh-tokens.ts";
import type { ClientInfo, SessionService } from "./sessions.ts";
import type { TokenVerifier, VerifiedToken } from "./tokens.ts";

export type Ending = { scope: LogoutScope; holder: KeyHolder } & (
  | { by: "refresh token" | "cookie"; refreshToken: string }
  | { by: "bearer"; caller: UserRecord; token: VerifiedToken }
);

export interface SessionEndingDeps {
  authenticator: Authenticator;
  idempotency: Idempotency;
  trustProxy: number;
  /** Refuses a request the session cookie authenticates from an origin that may not use it. */
  cookieOrigin: (request: Request) => void;
}

/** The macro `endingSession`: the route's `ending`, and its `keyHolder`; listed before the route's operation. */
export function sessionEnding({ authenticator, idempotency, trustProxy, cookieOrigin }: SessionEndingDeps) {
  const identify = identifier(authenticator, { idempotency });

  async function named(body: unknown, request: Request, info: RequestInfo, verifier: TokenVerifier): Promise<Ending> {
    const { scope, refreshToken } = logoutRequest(body);
    // By refresh token, the session is named without an access token: one that expired can still sign out.
    // A repeat finds the token spent, so the key is held under its digest, not under a user.
    if (refreshToken !== undefined) {
      return { by: "refresh token", scope, refreshToken, holder: { caller: `refresh:${refreshDigest(refreshToken)}` } };
    }
    // By the session cookie, when nothing else names a session: its answer clears the cookie.
    const cookie = request.headers.has("authorization") ? undefined : cookieRefreshToken(request, trustProxy);
    if (cookie !== undefined) {
      cookieOrigin(request);
      return { by: "cookie", scope, refreshToken: cookie, holder: { caller: `refresh:${refreshDigest(cookie)}` } };
    }
    // By Bearer token, the key is the session's own: another session's repeat ends its own session.
    const { caller, token } = await identify(request, body, info, verifier);
    return { by: "bearer", scope, caller, token, holder: bySession(caller, token) };
  }

  return new Elysia()
    .use(requestFacts)
    .use(authenticator.plugin)
    .macro({
      endingSession: {
        resolve: async ({ body, request, requestInfo, accessToken }) => {
          const ending = await named(body, request, requestInfo, accessToken);
          return { ending, keyHolder: ending.holder };
        },
      },
    });
}

/** Ends the sessions the logout names; `clearCookie` drops the session cookie when it is of no more use. */
export async function endSessions(
  sessions: SessionService,
  ending: Ending,
  client: ClientInfo,
  clearCookie: () => void,
): Promise<void> {
  if (ending.by === "bearer") return sessions.logout(ending.caller, ending.token, ending.scope, client);
  if (ending.by === "refresh token") return sessions.logoutByRefresh(ending.refreshToken, ending.scope, client);
  // Ending this session, the cookie is of no more use (and nor is one that ended long ago); ending the
  // others, it goes on.
  await sessions.logoutByRefresh(ending.refreshToken, ending.scope, client).catch((error: unknown) => {
    clearCookie();
    throw error;
  });
  if (ending.scope !== "others") clearCookie();
}
