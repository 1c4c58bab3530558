// The mutation a GraphQL request names, for its Idempotency-Key: what a repeat must match, whether a
// failed answer means nothing changed (so the key is free again), and the key held while Yoga runs it.
import { getOperationAST, Kind, parse } from "graphql";
import type { AnswerSet } from "../http/etag.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { GRAPHQL_JSON_TYPE } from "./errors.ts";

/** A POST that names a mutation to run (the operation it selects). */
export interface MutationRequest {
  /** The request's JSON body: what a repeat under the same Idempotency-Key must match. */
  body: unknown;
  /** It asks for one root field alone: when that field fails, the whole mutation changed nothing. */
  single: boolean;
}

/** The mutation a request's JSON body names; null when it names none (or cannot be read). */
export function mutationOf(text: string): MutationRequest | null {
  let request: { query?: unknown; operationName?: unknown };
  try {
    request = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof request?.query !== "string") return null;
  try {
    const name = typeof request.operationName === "string" ? request.operationName : undefined;
    const operation = getOperationAST(parse(request.query), name);
    if (operation?.operation !== "mutation") return null;
    const { selections } = operation.selectionSet;
    return { body: request, single: selections.length === 1 && selections[0]!.kind === Kind.FIELD };
  } catch {
    // Unparsable: Yoga answers it, and there is nothing to keep.
    return null;
  }
}

/**
 * Whether a mutation's answer says its root field failed before it changed anything: no data, and no
 * error below a root field (one there means the field's resolver had returned).
 */
export function failedWholly(answer: string): boolean {
  try {
    const { data, errors } = JSON.parse(answer) as { data?: unknown; errors?: { path?: unknown[] }[] };
    return data == null && Array.isArray(errors) && errors.every((error) => (error.path?.length ?? 0) <= 1);
  } catch {
    return false;
  }
}

/** A mutation's Idempotency-Key, claimed before Yoga runs it: Yoga's answer goes in, what to send comes out. */
export interface HeldAnswer {
  answer(yoga: Response): Promise<Response>;
  /** Yoga failed: the key is free again. */
  fail(): void;
}

/**
 * The mutation's claim on its Idempotency-Key, taken before Yoga runs it: the answer kept for a repeat
 * (a refusal rejects), or the hold that Yoga's answer completes.
 */
export async function holdAnswer(
  idempotency: Idempotency,
  { request, caller, mutation }: { request: Request; caller: string; mutation: MutationRequest },
): Promise<Response | HeldAnswer> {
  const claim = await idempotency.begin({ request, caller, body: mutation.body });
  if (claim instanceof Response) return claim;
  if (claim === null) throw new Error("holdAnswer: the request carries no Idempotency-Key");
  const fail = () => void claim.release().catch(() => {});
  return {
    async answer(yoga) {
      const set: AnswerSet = {
        status: yoga.status,
        headers: { "content-type": yoga.headers.get("content-type") ?? GRAPHQL_JSON_TYPE },
      };
      const text = await yoga.text().catch((error: unknown) => {
        fail();
        throw error;
      });
      // A refusal changed nothing: the key is free again, so its retry runs (see Claim.keep for a status from 400).
      if (mutation.single && failedWholly(text)) await claim.release();
      else await claim.keep(text, set);
      return fromSet(text, set);
    },
    fail,
  };
}

export function fromSet(body: string, set: AnswerSet): Response {
  const status = Number(set.status ?? 200);
  // Header values are strings in every `set` here; Headers would turn a number into one anyway.
  return new Response(status === 304 ? null : body, { status, headers: set.headers as Record<string, string> });
}
