// The account services, built once from the configuration and the store: the app serves them over
// HTTP and the CLI calls them on the box, so an account made or changed either way obeys the same rules.
import { createAdminService } from "./admin/service.ts";
import { createPasswordHasher } from "./auth/passwords.ts";
import { createSessionService } from "./auth/sessions.ts";
import { createLoginThrottle } from "./auth/throttle.ts";
import { throttleWhenFull } from "./auth/throttle-memory.ts";
import { createTokenService } from "./auth/tokens.ts";
import type { Config } from "./config.ts";
import type { Store } from "./db/store.ts";
import type { Logger } from "./log.ts";
import { createUserService } from "./users/service.ts";

export function accountServices(config: Config, store: Store, logger: Logger) {
  const tokens = createTokenService(config.jwt.secret, config.jwt.ttlSeconds);
  const throttle = createLoginThrottle(throttleWhenFull(store.throttle), config.loginThrottle);
  const sessions = createSessionService({
    sessions: store.sessions,
    revocations: store.revocations,
    tokens,
    throttle,
    settings: config.sessions,
    logger,
  });
  const users = createUserService({
    users: store.users,
    resets: store.resets,
    audit: store.audit,
    passwords: createPasswordHasher(config.passwordCost),
    sessions,
    throttle,
    logger,
  });
  const admin = createAdminService({
    users: store.users,
    resets: store.resets,
    audit: store.audit,
    resetCodeTtlSeconds: config.resetCodeTtlSeconds,
  });
  return { tokens, sessions, users, admin };
}
