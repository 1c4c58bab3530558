// What each GraphQL resolver receives, built per operation from what the transport learned of the
// caller: Yoga's context factory (HTTP) and graphql-ws's (WebSocket) both build it here.
import type { Origin } from "../audit/model.ts";
import type { CategoryService } from "../categories/service.ts";
import type { GraphqlAuth } from "../config/index.ts";
import type { UserRecord } from "../db/store.ts";
import { limitKey } from "../lib/limit-key.ts";
import type { Hub, HubItem, Transport } from "../realtime/hub.ts";

// A type alias, not an interface: Yoga wants a context assignable to Record<string, unknown>.
export type GraphQLContext = {
  categories: CategoryService;
  /** The verified caller, or null when no token was sent (only possible unless auth is `required`). */
  viewer: UserRecord | null;
  auth: GraphqlAuth;
  requestId: string | undefined;
  /** Where the request came from, for the audit log. */
  origin: Origin;
  /** Opens this caller's subscription to category changes (over the request's transport), after a cursor if given. */
  subscribe: (after: string | null) => Promise<AsyncIterableIterator<HubItem>>;
  /** Set once a query has run without errors: its answer may be kept, counted under this label. */
  outcome: { operation?: string };
};

/** What a transport knows of the caller of an operation: the context's own facts, and what its subscription needs. */
export type Caller = Pick<GraphQLContext, "viewer" | "requestId" | "origin" | "outcome"> & {
  /** The Authorization the viewer was authenticated with: a subscription checks it again while open. */
  authorization: string | null;
  /** When that token expires (ms since the epoch): a subscription ends with TOKEN_EXPIRED then. */
  tokenExpiresAt: number | null;
  transport: Transport;
  /** The cursor a reconnecting client resumes after when the operation names none (SSE's Last-Event-ID). */
  resumeAfter: string | null;
};

type ContextDeps = Pick<GraphQLContext, "categories" | "auth"> & { hub: Hub };

export function graphqlContext({ categories, hub, auth }: ContextDeps) {
  return ({ authorization, tokenExpiresAt, transport, resumeAfter, ...facts }: Caller): GraphQLContext => ({
    ...facts,
    categories,
    auth,
    subscribe: (after) =>
      hub.subscribe({
        owner: facts.viewer
          ? `user:${facts.viewer.id}`
          : `client:${facts.origin.address && limitKey(facts.origin.address)}`,
        authorization: facts.viewer ? authorization : null,
        expiresAt: facts.viewer ? tokenExpiresAt : null,
        transport,
        after: after ?? resumeAfter,
      }),
  });
}
