// GraphQL at /graphql, mounted through @elysiajs/graphql-yoga: GET and POST are Yoga's, with svc's own
// part of a request (requests.ts) in Elysia hooks local to them, and graphql-ws's Bun adapter on the
// same path and schema (websocket.ts), which the server upgrades to. Also the SDL for code generators
// and GraphiQL, when enabled.
import { yoga } from "@elysiajs/graphql-yoga";
import type { WebSocketHandler } from "bun";
import { Elysia } from "elysia";
import { assetResponse } from "../http/embedded.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import { graphqlCaches } from "./caches.ts";
import type { GraphqlDeps } from "./deps.ts";
import { graphqlRequests } from "./requests.ts";
import { graphqlWebSocket } from "./websocket.ts";
import { yogaConfig } from "./yoga-config.ts";

export const GRAPHQL_PATH = "/graphql";

export type { GraphqlDeps } from "./deps.ts";

export function graphqlRoutes(deps: GraphqlDeps) {
  const { config, metrics, answers } = deps;
  const caches = graphqlCaches();
  metrics.reportCaches(() => ({ ...caches.sizes(), responses: answers.size }));
  const requests = graphqlRequests(deps);
  const { yoga: options, enveloped, contextFor } = yogaConfig({ ...deps, caches, typeDefs, askedBy: requests.askedBy });
  const sockets = graphqlWebSocket({
    ...deps,
    enveloped,
    contextFor,
    auth: config.auth,
    onSlowReader: () => metrics.subscriptionDropped("slow"),
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
  // Yoga's GET and POST, with svc's hooks around them: local to this instance, they reach only those two.
  routes.use(
    new Elysia({ name: "svc/graphql-yoga" })
      .use(requestFacts)
      .use(deps.authenticator.plugin)
      .onBeforeHandle(requests.beforeHandle)
      .onAfterHandle(requests.afterHandle)
      .onError(requests.error)
      .use(yoga({ path: GRAPHQL_PATH, ...options })),
  );
  // The handler typed for the server, which hands each event the socket graphqlWebSocket upgraded (its data is that module's).
  const websocket = { ...sockets, handler: sockets.handler as unknown as WebSocketHandler<never> };
  return { routes, websocket };
}
