// GraphQL at /graphql, mounted through @elysiajs/graphql-yoga: GET and POST are Yoga's, with svc's own
// part of a request (requests.ts) in one local hook before Yoga and a Yoga plugin (yoga-config.ts), and
// graphql-ws on the same path (websocket.ts), which the server upgrades to. Also the SDL for code
// generators and GraphiQL, when enabled.
import { yoga } from "@elysiajs/graphql-yoga";
import type { Server, WebSocketHandler } from "bun";
import { Elysia } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import type { Caching } from "../cache/caching.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config.ts";
import { assetResponse } from "../http/embedded.ts";
import type { Idempotency } from "../http/idempotency.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { Hub } from "../realtime/hub.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import { graphqlCaches } from "./caches.ts";
import { graphqlRequests } from "./requests.ts";
import { type GraphqlWebSocket, graphqlWebSocket } from "./websocket.ts";
import { yogaConfig } from "./yoga-config.ts";

export const GRAPHQL_PATH = "/graphql";

export interface GraphqlDeps {
  config: Config["graphql"];
  metrics: Metrics;
  categories: CategoryService;
  authenticator: Authenticator;
  logger: Logger;
  answers: Caching["answers"];
  maxBodyBytes: number;
  trustProxy: number;
  idempotency: Idempotency;
  hub: Hub;
}

export function graphqlRoutes(deps: GraphqlDeps) {
  const { config, metrics, answers } = deps;
  const caches = graphqlCaches();
  metrics.reportCaches(() => ({ ...caches.sizes(), responses: answers.size }));
  let sockets: GraphqlWebSocket | undefined;
  const requests = graphqlRequests(deps);
  const options = yogaConfig({
    ...deps,
    caches,
    typeDefs,
    requestPlugin: requests.plugin,
    onYoga(made) {
      sockets = graphqlWebSocket({
        yoga: made,
        authenticator: deps.authenticator,
        auth: config.auth,
        trustProxy: deps.trustProxy,
        logger: deps.logger,
        onSlowReader: () => metrics.subscriptionDropped("slow"),
      });
    },
  });
  const routes = new Elysia({ name: "svc/graphql" });

  // For code generators: the SDL needs no token, since introspection would tell anyone the same.
  if (config.introspection) {
    routes.get(`${GRAPHQL_PATH}/schema.graphql`, ({ set }) => {
      set.headers["content-type"] = "text/plain; charset=utf-8";
      return typeDefs;
    });
  }
  if (config.playground) {
    // GraphiQL, whole from inside the binary (nothing from the internet), gzipped: read on its first
    // request. It opens with an Authorization template in its headers pane and a hint in its editor,
    // and keeps headers (the token) out of localStorage (src/build/assets.ts).
    routes.get(`${GRAPHQL_PATH}/playground`, ({ request }) =>
      assetResponse(request, "graphiql.html", "text/html; charset=utf-8"),
    );
  }
  // Last: the hook is local, so it reaches only the plugin's two routes, mounted after it.
  routes.onBeforeHandle(requests.beforeYoga).use(yoga({ path: GRAPHQL_PATH, ...options }));
  const websocket = {
    // Typed for the server, which hands each event the socket graphqlWebSocket upgraded (its data is that module's).
    handler: () => sockets!.handler as unknown as WebSocketHandler<never>,
    /** Upgrades a GraphQL WebSocket handshake on the GraphQL path; null when the request is not one. */
    upgrade: (request: Request, server: Server<unknown>) => sockets!.upgrade(request, server),
    /** Closes every socket once its operations complete. */
    closeAll: async () => sockets?.closeAll(),
  };
  return { routes, websocket };
}
