// What each GraphQL resolver receives. Built per request from what the HTTP layer learned.
import type { Origin } from "../audit/model.ts";
import type { CategoryService } from "../categories/service.ts";
import type { GraphqlAuth } from "../config.ts";
import type { UserRecord } from "../db/store.ts";
import type { HubItem } from "../realtime/hub.ts";

// A type alias, not an interface: Yoga wants a context assignable to Record<string, unknown>.
export type GraphQLContext = {
  categories: CategoryService;
  /** The verified caller, or null when no token was sent (only possible unless auth is `required`). */
  viewer: UserRecord | null;
  auth: GraphqlAuth;
  requestId: string | undefined;
  /** Where the request came from, for the audit log. */
  origin: Origin;
  /** Opens this caller's subscription to category changes (over the request's transport). */
  subscribe: () => Promise<AsyncIterableIterator<HubItem>>;
};
