// graphql-jit, through envelop's plugin, for the operations the engine compiles with SVC_GRAPHQL_JIT
// (engine.ts decides which, and imports this the first time one comes: until then neither the compiler
// nor fast-json-stringify and ajv, which it brings along, are loaded).
import { useGraphQlJit } from "@envelop/graphql-jit";
import type { GraphqlCaches } from "./caches.ts";

/** Compiles every operation it is handed, keeping the compiled ones in the engine's bounded cache. */
export const jitPlugin = (caches: GraphqlCaches) => useGraphQlJit({}, { cache: caches.compiled });
