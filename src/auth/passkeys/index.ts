// Passkeys, built once from the configuration and the store: the service its routes serve, and the
// second factor (contracts.ts's PasskeyFactor) the second-factor code takes.
import type { MfaVerificationCounter } from "../../observability/metrics.ts";
import type { Config } from "../../config/index.ts";
import type { Store } from "../../db/store.ts";
import type { Logger } from "../../observability/log.ts";
import type { SessionService } from "../sessions.ts";
import { createLoginThrottle } from "../throttle.ts";
import { throttleWhenFull } from "../throttle-memory.ts";
import { createPasskeyFactor } from "./factor.ts";
import { signInOptionsLimit } from "./options-limit.ts";
import { relyingParty } from "./relying-party.ts";
import { createPasskeyService } from "./service.ts";

export { createPasskeyFactor } from "./factor.ts";
export { passkeyRoutes } from "./routes.ts";

export function passkeyServices(
  config: Config,
  store: Store,
  sessions: SessionService,
  logger: Logger,
  counted?: MfaVerificationCounter,
) {
  const rp = relyingParty(config.mail);
  // The login throttle's rules and keys over the same table: a passkey's failures and a password's count
  // together per client, on every instance.
  const state = throttleWhenFull(store.throttle);
  const throttle = createLoginThrottle(state, config.loginThrottle);
  const service = createPasskeyService({
    passkeys: store.passkeys,
    users: store.users,
    audit: store.audit,
    sessions,
    throttle,
    optionsLimit: signInOptionsLimit(state),
    rp,
    logger,
    emailVerification: config.mail.verification,
    ...(counted && { counted }),
  });
  return { rp, service, factor: createPasskeyFactor({ passkeys: store.passkeys, rp }) };
}
