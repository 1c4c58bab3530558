// Removing a passkey is held to the step-up guard it is given (src/auth/mfa/contracts.ts's StepUpGuard): the
// routes mounted as the app mounts them, behind svc's request pipeline and problem answers, with a guard
// that answers as the second-factor code's does for an account with a factor and no recent step-up. The
// guard itself is the second-factor code's, tested there; here, that the route asks it before anything goes.
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { createAuthenticator } from "../../src/auth/authenticator.ts";
import type { StepUpGuard } from "../../src/auth/mfa/contracts.ts";
import { passkeyRoutes, passkeyServices } from "../../src/auth/passkeys/index.ts";
import type { UserRecord } from "../../src/db/store.ts";
import { AppError } from "../../src/errors/index.ts";
import { createIdempotency } from "../../src/http/idempotency.ts";
import { problemAnswers } from "../../src/http/problem-answers.ts";
import { requestPipeline } from "../../src/http/request-pipeline.ts";
import { createLoggers } from "../../src/observability/log.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { accountServices } from "../../src/process/services.ts";
import { expectProblem, testApp } from "../helpers.ts";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.ts";

const BASE = "/svc-api/v1/auth/passkeys";

/** The passkey routes with `stepUp`, on the test app's store and secret (its tokens hold here too). */
async function guardedApp(stepUp: StepUpGuard) {
  const t = await testApp();
  const { config, store } = t;
  const loggers = createLoggers("error", { write: () => true });
  const { tokens, logins } = accountServices(config, store, loggers.logger);
  const authenticator = createAuthenticator(tokens, store);
  const idempotency = createIdempotency({
    store: store.idempotency,
    secret: config.jwt.secret,
    ttlSeconds: config.idempotencyTtlSeconds,
    keysPerCaller: config.idempotencyKeysPerCaller,
  });
  const pipeline = requestPipeline({
    probes: [],
    logProbes: false,
    loggers,
    metrics: createMetrics(store),
    maxBodyBytes: config.maxBodyBytes,
    trustProxy: config.trustProxy,
  });
  const routes = passkeyRoutes({
    passkeys: passkeyServices(config, store, logins, loggers.logger).service,
    stepUp,
    authenticator,
    idempotency,
    maxBodyBytes: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    corsOrigins: [],
  });
  const app = new Elysia({ normalize: false })
    .use(pipeline.plugin)
    .use(problemAnswers({ logger: loggers.logger, methodsFor: () => [], answered: pipeline.answered }))
    .use(routes);
  const guarded = async (method: string, path: string, token: string) => {
    const response = await app.handle(
      new Request(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${token}` } }),
    );
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
  };
  return { ...t, guarded };
}

describe("removing a passkey needs a step-up", () => {
  test("refused by the guard: 403 mfa_step_up_required and the passkey stays; allowed: 204", async () => {
    const steppedUp = new Set<string>();
    const asked: string[] = [];
    const stepUp: StepUpGuard = {
      async require(user: UserRecord) {
        asked.push(user.id);
        if (!steppedUp.has(user.id))
          throw new AppError("mfa_step_up_required", "Show a second factor first: POST auth/mfa/verify.");
      },
    };
    const { guarded, signUp, call, config } = await guardedApp(stepUp);
    const ann = await signUp("ann");
    const laptop = new SoftwareAuthenticator(new URL(config.mail.publicUrl).origin);
    const options = (await call("POST", `${BASE}/options`, { token: ann.token })).body;
    const { id } = (await call("POST", BASE, { token: ann.token, body: { response: await laptop.register(options) } }))
      .body;

    expectProblem(await guarded("DELETE", `${BASE}/${id}`, ann.token), 403, "mfa_step_up_required");
    expect(asked).toEqual([ann.user.id]);
    expect((await call("GET", BASE, { token: ann.token })).body.items).toHaveLength(1);

    steppedUp.add(ann.user.id);
    expect((await guarded("DELETE", `${BASE}/${id}`, ann.token)).status).toBe(204);
    expect((await call("GET", BASE, { token: ann.token })).body.items).toEqual([]);
  });
});
