// A route's `operation`: one declaration that both documents the route (its OpenAPI `detail`, openapi.ts)
// and does what that document promises: a write held to If-Match / If-None-Match before it runs
// (etag.ts), and an Idempotency-Key's answer kept and replayed around the handler (idempotency.ts).
// An Elysia macro: its hooks are on the routes whose operation asks for them, and on no other.
import { Elysia } from "elysia";
import type { Awaitable } from "../awaitable.ts";
import type { UserRecord } from "../db/store.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import { Replayed } from "../errors.ts";
import { clientAddress } from "./client-address.ts";
import { hasPreconditions, requirePreconditions } from "./etag.ts";
import { bySession, byUser, type Claim, type Idempotency, type KeyHolder } from "./idempotency.ts";
import { type Doc, documented } from "./openapi.ts";

/**
 * Whose an Idempotency-Key is: "client", the client address's (a route without a caller); "user", the
 * caller's (byUser); "session", the caller's session's own (bySession: an answer that carries tokens or
 * acts on the session); or the holder the route names from its context, once its own resolve has run.
 * (`never`: whatever context the route's function takes, it is handed the route's.)
 */
export type KeyScope = "client" | "user" | "session" | ((context: never) => Awaitable<KeyHolder>);

/** What a write acts on, as it stands, and as GET shows it (the ETag a precondition names is of that). */
export interface Target<Record> {
  current: (context: never) => Awaitable<Record>;
  shown: (record: Record) => object;
}

export interface Operation<Record> extends Omit<Doc, "idempotent"> {
  /** The route honours Idempotency-Key, keys held by this scope. */
  idempotent?: KeyScope;
  /**
   * For a "write" or "guarded" route: what it acts on, read only when the request carries a precondition
   * (the handler gets it as `unchanged`, to write only while it is still so). None: the route acts on
   * nothing with a representation (a create, a login): If-Match cannot hold, If-None-Match always does.
   */
  target?: Target<Record>;
}

export interface OperationDeps {
  idempotency: Idempotency;
  trustProxy: number;
}

/** The request's claim on its Idempotency-Key, in the context from the resolve to the answer. */
const CLAIM = Symbol("idempotency claim");

/** The context the macro's hooks read: Elysia's, and what the bearer check and the resolve put there. */
interface Context {
  request: Request;
  body: unknown;
  set: { status?: number | string; headers: Record<string, string | number> };
  responseValue?: unknown;
  caller?: UserRecord;
  token?: VerifiedToken;
  [CLAIM]?: Claim | null;
}

/** The macro `operation` (`Record`: what the routes' targets are, for their handlers' `unchanged`). */
export function operations<Record = never>({ idempotency, trustProxy }: OperationDeps) {
  function holder(scope: KeyScope, context: Context): Awaitable<KeyHolder> {
    if (scope === "client") return { caller: `client:${clientAddress(context.request, trustProxy)}` };
    if (typeof scope === "function") return scope(context as never);
    // The bearer check (auth/bearer.ts) has run on every route that names its caller's keys.
    const { caller, token } = context as Required<Pick<Context, "caller" | "token">>;
    return scope === "user" ? byUser(caller, token) : bySession(caller, token);
  }

  /** The target as it stands when the request's preconditions hold it; throws 412 when they fail. */
  async function preconditioned(target: Target<Record>, context: Context): Promise<Record | undefined> {
    if (!hasPreconditions(context.request)) return undefined;
    const record = await target.current(context as never);
    requirePreconditions(context.request, target.shown(record));
    return record;
  }

  return new Elysia().macro({
    operation: ({ idempotent, target, ...doc }: Operation<Record>) => {
      const detail = documented({ ...doc, idempotent: idempotent !== undefined });
      const held = doc.conditional === "write" || doc.conditional === "guarded";
      if (idempotent === undefined && !held) return { detail };
      // A body the route reads is part of the request a key names; a route that reads none ignores any sent.
      let readsBody = false;
      return {
        detail,
        // Elysia hands over the route's whole hook (its type names only the schemas).
        introspect(hook: object) {
          readsBody = (hook as { parse?: unknown }).parse !== undefined;
        },
        // The claim first: a repeat gets its first answer, whatever the preconditions say of the record now.
        async resolve(context: Context): Promise<{ [CLAIM]: Claim | null; unchanged: Record | undefined }> {
          const claim =
            idempotent === undefined
              ? null
              : await idempotency.begin({
                  request: context.request,
                  body: readsBody ? (context.body ?? null) : null,
                  ...(await holder(idempotent, context)),
                });
          if (claim instanceof Response) throw new Replayed(claim);
          try {
            if (!held) return { [CLAIM]: claim, unchanged: undefined };
            if (target === undefined) {
              requirePreconditions(context.request, null);
              return { [CLAIM]: claim, unchanged: undefined };
            }
            return { [CLAIM]: claim, unchanged: await preconditioned(target, context) };
          } catch (error) {
            await claim?.release().catch(() => {});
            throw error;
          }
        },
        async afterHandle(context: Context) {
          await context[CLAIM]?.keep(context.responseValue, context.set);
        },
        // Runs on every answer, a failure's too (a route's own error hook would not: Elysia runs the global
        // onError first, and it answers). A claim not kept by then is one whose work failed: its key is freed.
        async mapResponse(context: Context) {
          await context[CLAIM]?.release().catch(() => {});
        },
      };
    },
  });
}
