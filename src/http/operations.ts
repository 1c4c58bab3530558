// A route's `operation`: one declaration that both documents the route (its OpenAPI `detail`, openapi.ts)
// and does what that document promises: a write held to If-Match / If-None-Match before it runs
// (etag.ts), and an Idempotency-Key's answer kept and replayed around the handler (idempotency.ts).
// An Elysia macro: its hooks are on the routes whose operation asks for them, and on no other.
import { Elysia } from "elysia";
import type { Awaitable } from "../lib/awaitable.ts";
import type { UserRecord } from "../db/store.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import { Replayed } from "../errors/index.ts";
import { clientAddress } from "./client-address.ts";
import { hasPreconditions, requirePreconditions } from "./etag.ts";
import { bySession, byUser, type Claim, type Idempotency, type KeyHolder } from "./idempotency.ts";
import { type Doc, documented } from "./openapi.ts";

/**
 * Whose an Idempotency-Key is: "client", the client address's (a route without a caller); "user", the
 * caller's (byUser); "session", the caller's session's own (bySession: an answer that carries tokens or
 * acts on the session); "resolved", the `keyHolder` a resolve of the route's own names, listed before
 * `operation` (a logout: by the session it ends).
 */
export type KeyScope = "client" | "user" | "session" | "resolved";

/** What a route's target is read from: its path's parameters, and its caller (every target is behind the bearer check). */
export interface TargetOf {
  params: Record<string, string>;
  caller: UserRecord;
}

/** What a write acts on, as it stands, and as GET shows it (the ETag a precondition names is of that). */
export interface Target<Held> {
  current: (route: TargetOf) => Awaitable<Held>;
  shown: (record: Held) => object;
}

export interface Operation<Held> extends Omit<Doc, "idempotent"> {
  /** The route honours Idempotency-Key, keys held by this scope. */
  idempotent?: KeyScope;
  /**
   * For a "write" or "guarded" route: what it acts on, read only when the request carries a precondition
   * (the handler gets it as `unchanged`, to write only while it is still so). None: the route acts on
   * nothing with a representation (a create, a login): If-Match cannot hold, If-None-Match always does.
   */
  target?: Target<Held>;
}

export interface OperationDeps {
  idempotency: Idempotency;
  trustProxy: number;
}

/** The request's claim on its Idempotency-Key, in the context from the resolve to the answer. */
const CLAIM = Symbol("idempotency claim");

/**
 * The context the macro's hooks read: Elysia's, and what the bearer check, the route's own resolve and this
 * one put there. The hooks name each part they read: Elysia reads a hook's source to learn which parts of
 * the request to parse (a context handed whole to a function would have it parse cookies and the query).
 */
interface Context {
  request: Request;
  body: unknown;
  params: Record<string, string>;
  set: { status?: number | string; headers: Record<string, string | number> };
  responseValue?: unknown;
  caller?: UserRecord;
  token?: VerifiedToken;
  keyHolder?: KeyHolder;
  [CLAIM]?: Claim | null;
}

/** What `operation` adds to a route: its detail, and the hooks its declaration asks for (none for a read). */
interface OperationHooks<Held> {
  detail: ReturnType<typeof documented>;
  introspect?: (hook: object) => void;
  resolve?: (context: Context) => Promise<{ [CLAIM]: Claim | null; unchanged: Held | undefined }>;
  afterHandle?: (context: Context) => Promise<void>;
  mapResponse?: (context: Context) => Promise<void>;
}

/** The macro `operation` (`Held`: what the routes' targets are, their handlers' `unchanged`). */
export function operations<Held = never>({ idempotency, trustProxy }: OperationDeps) {
  function holder(
    scope: KeyScope,
    { request, caller, token, keyHolder }: Pick<Context, "request" | "caller" | "token" | "keyHolder">,
  ): KeyHolder {
    if (scope === "client") return { caller: `client:${clientAddress(request, trustProxy)}` };
    if (scope === "resolved") return keyHolder!;
    // The bearer check (auth/bearer.ts) has run on every route that names its caller's keys.
    return scope === "user" ? byUser(caller!, token!) : bySession(caller!, token!);
  }

  /** The target as it stands when the request's preconditions hold it; throws 412 when they fail. */
  async function preconditioned(target: Target<Held>, request: Request, route: TargetOf): Promise<Held | undefined> {
    if (!hasPreconditions(request)) return undefined;
    const record = await target.current(route);
    requirePreconditions(request, target.shown(record));
    return record;
  }

  /** After the handler: its answer kept under the request's key. */
  async function keepAnswer(context: Context) {
    await context[CLAIM]?.keep(context.responseValue, context.set);
  }

  /**
   * On every answer, a failure's too (a route's own error hook would not run: Elysia runs the global onError
   * first, and it answers). A claim not kept by then is one whose work failed: its key is freed.
   */
  async function freeUnkept(context: Context) {
    await context[CLAIM]?.release().catch(() => {});
  }

  return new Elysia().macro({
    operation: ({ idempotent, target, ...doc }: Operation<Held>): OperationHooks<Held> => {
      const detail = documented({ ...doc, idempotent: idempotent !== undefined });
      const held = doc.conditional === "write" || doc.conditional === "guarded";
      if (idempotent === undefined && !held) return { detail };
      // A body the route reads is part of the request a key names; a route that reads none ignores any sent.
      let readsBody = false;
      const hooks: OperationHooks<Held> = {
        detail,
        // Elysia hands over the route's whole hook (its type names only the schemas).
        introspect(hook) {
          readsBody = (hook as { parse?: unknown }).parse !== undefined;
        },
        // The claim first: a repeat gets its first answer, whatever the preconditions say of the record now.
        // An arrow, as every Elysia hook in svc: Elysia reads a hook's source to learn what it uses, and
        // finds a method's parameters by a line break the minified binary does not have.
        resolve: async ({ request, body, params, caller, token, keyHolder }) => {
          const claim =
            idempotent === undefined
              ? null
              : await idempotency.begin({
                  request,
                  body: readsBody ? (body ?? null) : null,
                  ...holder(idempotent, { request, caller, token, keyHolder }),
                });
          if (claim instanceof Response) throw new Replayed(claim);
          try {
            if (!held) return { [CLAIM]: claim, unchanged: undefined };
            if (target === undefined) {
              requirePreconditions(request, null);
              return { [CLAIM]: claim, unchanged: undefined };
            }
            return { [CLAIM]: claim, unchanged: await preconditioned(target, request, { params, caller: caller! }) };
          } catch (error) {
            await claim?.release().catch(() => {});
            throw error;
          }
        },
      };
      return idempotent === undefined ? hooks : { ...hooks, afterHandle: keepAnswer, mapResponse: freeUnkept };
    },
  });
}
