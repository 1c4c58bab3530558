// The mutation a GraphQL request names, for its Idempotency-Key: what a repeat must match, and whether
// a failed answer means nothing changed (so the key is free again).
import { getOperationAST, Kind, parse } from "graphql";

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
export function failedAsAWhole(answer: string): boolean {
  try {
    const { data, errors } = JSON.parse(answer) as { data?: unknown; errors?: { path?: unknown[] }[] };
    return data == null && Array.isArray(errors) && errors.every((error) => (error.path?.length ?? 0) <= 1);
  } catch {
    return false;
  }
}
