// Counts GraphQL operations by name and outcome. Names are chosen by clients, so the label set is
// bounded: the first 100 distinct names are kept, later ones count as "other".
import { getOperationAST, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Metrics } from "../metrics.ts";

const MAX_NAMES = 100;

export type OperationLabel = (document: DocumentNode | undefined, requested?: string | null) => string;

export function operationLabels(): OperationLabel {
  const names = new Set<string>();
  return (document, requested) => {
    const name = (document && getOperationAST(document, requested)?.name?.value) || "anonymous";
    if (names.has(name)) return name;
    if (names.size >= MAX_NAMES) return "other";
    names.add(name);
    return name;
  };
}

export function operationMetrics(metrics: Metrics, label: OperationLabel): Plugin {
  return {
    onValidate({ params }) {
      return ({ valid }) => {
        if (!valid) metrics.graphqlOperation(label(params.documentAST), "invalid");
      };
    },
    onExecute({ args }) {
      const name = label(args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          const failed = "errors" in result && (result.errors?.length ?? 0) > 0;
          metrics.graphqlOperation(name, failed ? "error" : "ok");
        },
      };
    },
  };
}
