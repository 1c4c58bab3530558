// createApp(deps): every feature mounted in one visible place. Tests call app.handle(request).
import { Elysia } from "elysia";
import { authRoutes } from "./auth/index.ts";
import { createAuthenticator } from "./auth/authenticator.ts";
import { createPasswordHasher } from "./auth/passwords.ts";
import { createLoginThrottle } from "./auth/throttle.ts";
import { createTokenService } from "./auth/tokens.ts";
import { createCategoryService } from "./categories/service.ts";
import type { Config } from "./config.ts";
import type { Store } from "./db/store.ts";
import { graphqlRoutes } from "./graphql/index.ts";
import { healthRoutes } from "./health/index.ts";
import { corsFor } from "./http/cors.ts";
import { methodIndex } from "./http/method-index.ts";
import { openapiRoutes } from "./http/openapi.ts";
import { plumbing } from "./http/plumbing.ts";
import type { Loggers } from "./log.ts";
import { createMetrics, metricsRoutes } from "./metrics.ts";
import { usersRoutes } from "./users/index.ts";
import { createUserService } from "./users/service.ts";

export interface AppDeps {
  config: Config;
  store: Store;
  loggers: Loggers;
}

export function createApp({ config, store, loggers }: AppDeps) {
  const { logger } = loggers;
  const tokens = createTokenService(config.jwt.secret, config.jwt.ttlSeconds);
  const authenticator = createAuthenticator(tokens, store);
  const users = createUserService({
    users: store.users,
    passwords: createPasswordHasher(config.passwordCost),
    tokens,
    throttle: createLoginThrottle(store.throttle, config.loginThrottle),
    revocations: store.revocations,
    versions: () => store.versions(),
  });
  const categories = createCategoryService(store.categories, () => store.versions());
  const metrics = createMetrics(store);

  // The 405 check needs every route, so it is filled in once they are all mounted.
  let methodsFor: (path: string) => string[] = () => [];
  const app = new Elysia({ normalize: false })
    .use(plumbing({ loggers, metrics, maxBodyBytes: config.maxBodyBytes, methodsFor: (path) => methodsFor(path) }))
    .use(corsFor(config.corsOrigins))
    .use(openapiRoutes())
    .use(healthRoutes(store, config.env))
    .use(config.metrics ? metricsRoutes(metrics) : new Elysia())
    .use(authRoutes(users, authenticator, config.maxBodyBytes, config.trustProxy))
    .use(usersRoutes(users, authenticator, config.maxBodyBytes))
    .use(graphqlRoutes({ config: config.graphql, metrics, categories, authenticator, logger, versions: () => store.versions(), maxBodyBytes: config.maxBodyBytes }));
  methodsFor = methodIndex(app.routes);
  return app;
}

export type App = ReturnType<typeof createApp>;
