// Passkeys, built once from the configuration and the store: the service its routes serve. The second factor
// the second-factor code takes (contracts.ts's PasskeyFactor) is createPasskeyFactor's, made before it.
import type { MfaVerificationCounter } from "../../observability/metrics.ts";
import type { Config } from "../../config/index.ts";
import type { Store } from "../../db/store.ts";
import type { Logger } from "../../observability/log.ts";
import type { ThrottleStore } from "../../db/store.ts";
import type { SessionService } from "../sessions.ts";
import type { LoginThrottle } from "../throttle.ts";
import { signInOptionsLimit } from "./options-limit.ts";
import { relyingParty } from "./relying-party.ts";
import { createPasskeyService } from "./service.ts";

export { createPasskeyFactor } from "./factor.ts";
export { passkeyRoutes } from "./routes.ts";

/** What passkeys share with the password's login: its sessions, and its throttle (with the state it keeps). */
export interface LoginParts {
  sessions: SessionService;
  throttle: LoginThrottle;
  throttleState: ThrottleStore;
}

export function passkeyServices(
  config: Config,
  store: Store,
  { sessions, throttle, throttleState }: LoginParts,
  logger: Logger,
  counted?: MfaVerificationCounter,
) {
  const rp = relyingParty(config.mail);
  // The login's own throttle: a passkey's failures and a password's count together per client, on every instance.
  const service = createPasskeyService({
    passkeys: store.passkeys,
    users: store.users,
    audit: store.audit,
    sessions,
    throttle,
    optionsLimit: signInOptionsLimit(throttleState),
    rp,
    logger,
    emailVerification: config.mail.verification,
    ...(counted && { counted }),
  });
  return { rp, service };
}
