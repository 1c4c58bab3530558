// What the GraphQL routes are given; apart from index.ts, so that the parts it mounts (requests.ts,
// yoga-config.ts) read it without importing their importer.
import type { Authenticator } from "../auth/authenticator.ts";
import type { Caching } from "../cache/caching.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config/index.ts";
import type { Idempotency } from "../http/idempotency.ts";
import type { Logger } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Hub } from "../realtime/hub.ts";

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
