// Your sessions, joined to the client's `auth` (client.ts): every live one of the account (this browser's, a
// phone's), and ending one, as a "signed-in devices" page does (docs/client/sessions.md).
import type { Auth } from "./auth.js";
import { answerOf } from "./http.js";
import type { components } from "./openapi.generated.js";

/** One live session of yours: when and where it signed in, how, and whether it is this client's (`current`). */
export type SessionInfo = components["schemas"]["Session"];

const SESSIONS = "/svc-api/v1/auth/sessions";

export interface SessionCalls {
  /** Your live sessions, newest first; `current` marks this client's. */
  list(): Promise<SessionInfo[]>;
  /**
   * Ends one: its access and refresh tokens stop working at once. Given the listed session itself, and it is
   * this client's (`current`), it is `auth.logout()`: this client forgets it and svc clears its cookie. not_found.
   */
  end(session: string | Pick<SessionInfo, "id" | "current">): Promise<void>;
}

export interface SessionsCalls {
  readonly sessions: SessionCalls;
}

export function sessionsCalls(auth: Auth): SessionsCalls {
  return {
    sessions: {
      list: async () => answerOf<SessionInfo[]>(await auth.authorized({ method: "GET", path: SESSIONS })),
      end: async (session) => {
        // This client's own: a logout, which also clears svc's session cookie (a DELETE would leave it for the
        // next page load to present, and be refused with).
        if (typeof session !== "string" && session.current) return auth.logout();
        const path = `${SESSIONS}/${encodeURIComponent(typeof session === "string" ? session : session.id)}`;
        await answerOf<void>(await auth.authorized({ method: "DELETE", path }));
      },
    },
  };
}
