// What each GraphQL resolver receives. Built per request from what the HTTP layer learned.
import type { Origin } from "../audit/model.ts";
import type { CategoryService } from "../categories/service.ts";
import type { GraphqlAuth } from "../config.ts";
import type { UserRecord } from "../db/store.ts";
import type { HubItem, Transport } from "../realtime/hub.ts";

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
};

/** What serve() (or the WebSocket server) hands Yoga along with the request. */
export interface ServerContext {
  viewer: UserRecord | null;
  /** The Authorization the viewer was authenticated with: a subscription checks it again while open. */
  authorization: string | null;
  /** When that token expires (ms since the epoch): a subscription ends with TOKEN_EXPIRED then. */
  tokenExpiresAt: number | null;
  transport: Transport;
  requestId: string | undefined;
  origin: Origin;
  /** A POST's body, already read: Yoga's parser reads it from here, the request's stream being spent. */
  body: Uint8Array<ArrayBuffer> | undefined;
  /** Set once a query has run without errors: its answer may be kept, counted under this label. */
  outcome: { operation?: string };
}
