// Counts GraphQL operations by name and outcome, and tells the HTTP routes which answers may be cached.
// Names are chosen by clients, so the label set is bounded: the first 100 distinct names are kept,
// later ones count as "other".
import { getOperationAST, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Metrics } from "../observability/metrics.ts";
import type { GraphQLContext } from "./context.ts";

const MAX_NAMES = 100;

function operationLabels() {
  const names = new Set<string>();
  return (document: DocumentNode | undefined, requested?: string | null): string => {
    const name = (document && getOperationAST(document, requested)?.name?.value) || "anonymous";
    if (names.has(name)) return name;
    if (names.size >= MAX_NAMES) return "other";
    names.add(name);
    return name;
  };
}

/**
 * Counts every operation's outcome, and marks a query (never a mutation) that ran without errors in its
 * context's `outcome`: its answer may be cached, counted under the same label when it is.
 */
export function operationMetrics(metrics: Metrics): Plugin {
  const label = operationLabels();
  return {
    onValidate({ params }) {
      return ({ valid }) => {
        if (!valid) metrics.graphqlOperation(label(params.documentAST), "invalid");
      };
    },
    onExecute({ args }) {
      const name = label(args.document, args.operationName);
      const query = getOperationAST(args.document, args.operationName)?.operation === "query";
      return {
        onExecuteDone({ result }) {
          const failed = "errors" in result && (result.errors?.length ?? 0) > 0;
          metrics.graphqlOperation(name, failed ? "error" : "ok");
          if (query && !failed && !(Symbol.asyncIterator in result))
            (args.contextValue as unknown as GraphQLContext).outcome.operation = name;
        },
      };
    },
  };
}
