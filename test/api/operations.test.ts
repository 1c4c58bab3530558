// A route's `operation` (src/http/operations.ts): the one declaration its document and its behaviour both
// come from. A small app of its own, so that what the macro does is seen apart from any feature.
import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { AppError } from "../../src/errors/index.ts";
import { createIdempotency } from "../../src/http/idempotency.ts";
import { jsonBody } from "../../src/http/json-body.ts";
import { operations } from "../../src/http/operations.ts";
import { problemAnswers } from "../../src/http/problem-answers.ts";
import { createLoggers } from "../../src/observability/log.ts";

async function counterApp() {
  const store = await openSqliteStore(":memory:");
  const idempotency = createIdempotency({
    store: store.idempotency,
    secret: new TextEncoder().encode("operations test secret, 32 bytes long"),
    ttlSeconds: 60,
    keysPerCaller: 10,
  });
  const { logger } = createLoggers("error", { write: () => {} });
  let count = 0;
  let failNext = false;
  const counter = () => ({ count });
  const app = new Elysia()
    .use(problemAnswers({ logger, methodsFor: () => [] }))
    .use(operations<{ count: number }>({ idempotency, trustProxy: 0 }))
    .get("/count", () => ({ count }), {
      operation: {
        operationId: "getCount",
        summary: "The count",
        tag: "health",
        ok: { status: 200, description: "It" },
        errors: [],
      },
    })
    .post(
      "/count",
      ({ body, set, unchanged }) => {
        if (failNext) {
          failNext = false;
          throw new AppError("not_found", "Gone.");
        }
        count += body.by;
        set.status = 201;
        return { count, checked: unchanged !== undefined };
      },
      {
        parse: jsonBody(1024),
        body: t.Object({ by: t.Integer() }),
        operation: {
          operationId: "addToCount",
          summary: "Add to the count",
          tag: "health",
          idempotent: "client",
          conditional: "write",
          target: { current: counter, shown: (held: { count: number }) => held },
          ok: { status: 201, description: "The count, added to" },
          errors: ["validation_failed"],
        },
      },
    );
  const send = async (headers: Record<string, string> = {}, by = 1) => {
    const reply = await app.handle(
      new Request("http://localhost/count", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ by }),
      }),
    );
    return { status: reply.status, headers: reply.headers, body: await reply.json() };
  };
  return { app, send, failNext: () => (failNext = true), count: () => count };
}

describe("a route's operation", () => {
  test("documents what it does: Idempotency-Key, If-Match and If-None-Match, and their refusals", async () => {
    const { app } = await counterApp();
    const route = app.routes.find((r) => r.method === "POST" && r.path === "/count")!;
    const detail = route.hooks.detail as { parameters: { name: string }[]; responses: Record<string, unknown> };
    expect(detail.parameters.map((p) => p.name)).toEqual(["Idempotency-Key", "If-Match", "If-None-Match"]);
    expect(Object.keys(detail.responses)).toEqual(expect.arrayContaining(["201", "409", "412", "422", "429"]));
  });

  test("a repeat with its Idempotency-Key gets the first answer and runs nothing; another body is 422", async () => {
    const { send, count } = await counterApp();
    const first = await send({ "idempotency-key": "k1" });
    const again = await send({ "idempotency-key": "k1" });
    expect(first).toMatchObject({ status: 201, body: { count: 1 } });
    expect(again).toMatchObject({ status: 201, body: { count: 1 } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await send({ "idempotency-key": "k1" }, 2)).body.code).toBe("idempotency_key_reused");
    expect(count()).toBe(1);
  });

  test("the key is claimed before the preconditions are held: a repeat with a tag now stale is still replayed", async () => {
    const { send } = await counterApp();
    const first = await send({ "idempotency-key": "k2", "if-none-match": '"other"' });
    expect(first.status).toBe(201);
    const again = await send({ "idempotency-key": "k2", "if-match": '"stale"' });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  test("a failed precondition or a failed handler frees the key: the retry runs", async () => {
    const { send, failNext, count } = await counterApp();
    expect((await send({ "idempotency-key": "k3", "if-match": '"stale"' })).status).toBe(412);
    failNext();
    expect((await send({ "idempotency-key": "k3" })).status).toBe(404);
    const retry = await send({ "idempotency-key": "k3" });
    expect(retry).toMatchObject({ status: 201, body: { count: 1, checked: false } });
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(count()).toBe(1);
  });

  test("the target is read only for a request with a precondition, and handed to the handler as unchanged", async () => {
    const { send } = await counterApp();
    expect((await send()).body.checked).toBe(false);
    expect((await send({ "if-none-match": '"other"' })).body.checked).toBe(true);
  });

  test("a route whose operation asks for nothing gets no hooks: its compiled handler stays synchronous", async () => {
    const { app } = await counterApp();
    const compiled = (method: string) => app.routes.find((r) => r.method === method && r.path === "/count")!.compile();
    expect(compiled("GET").constructor.name).toBe("Function");
    expect(compiled("POST").constructor.name).toBe("AsyncFunction");
  });
});
