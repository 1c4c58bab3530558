// GraphQL abuse limits, on by default: GraphQL Armor's Envelop plugins for depth, aliases, directives
// and cost, and graphql-js's own token limit for parsing. Field suggestions ("Did you mean …?") leak
// the schema just as introspection does, so they go together. Every limit refusal is one code.
import { blockFieldSuggestionsPlugin } from "@escape.tech/graphql-armor-block-field-suggestions";
import { costLimitPlugin } from "@escape.tech/graphql-armor-cost-limit";
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { maxDirectivesPlugin } from "@escape.tech/graphql-armor-max-directives";
import { GraphQLError, parse, type ValidationContext } from "graphql";
import type { Plugin } from "graphql-yoga";

export const GRAPHQL_LIMITS = {
  // svc's own queries are 2 deep; introspection is the deep one (15 for graphql-js's standard query),
  // and nesting `ofType` without end is the classic way to abuse it.
  maxDepth: 20,
  maxAliases: 10,
  maxDirectives: 10,
  maxTokens: 1000,
  maxCost: 5000,
} as const;

/** The `extensions.code` of every refusal by a limit above. */
export const LIMIT_CODE = "QUERY_LIMIT_EXCEEDED";

export function armorPlugins(introspection: boolean): Plugin[] {
  // Armor would throw its refusal out of validation as a "Syntax Error"; reported instead, with the code.
  const refusal = { propagateOnRejection: false, onReject: [reportLimit] };
  // One plugin package each rather than the whole of Armor: its token limit parses with its own import
  // of graphql's parser, which the bundler resolved to a second copy of graphql in the binary, whose
  // errors then failed every instanceof GraphQLError (a syntax error came out as an internal error).
  const plugins = [
    tokenLimit(GRAPHQL_LIMITS.maxTokens),
    maxDepthPlugin({ n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: false, flattenFragments: true, ...refusal }),
    maxAliasesPlugin({ n: GRAPHQL_LIMITS.maxAliases, ...refusal }),
    maxDirectivesPlugin({ n: GRAPHQL_LIMITS.maxDirectives, ...refusal }),
    costLimitPlugin({ maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true, ...refusal }),
    ...(introspection ? [] : [blockFieldSuggestionsPlugin()]),
  ];
  return plugins as Plugin[];
}

function reportLimit(context: ValidationContext | null, error: GraphQLError): void {
  const refused = limitError(error.message.replace(/^Syntax Error: /, ""), error);
  if (context) context.reportError(refused);
  else throw refused;
}

function limitError(message: string, located?: GraphQLError): GraphQLError {
  return new GraphQLError(message, { nodes: located?.nodes, extensions: { code: LIMIT_CODE } });
}

/** graphql-js's own parser stops after maxTokens; the refusal then carries the limit code. */
function tokenLimit(maxTokens: number): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        try {
          return parse(source, { ...options, maxTokens });
        } catch (error) {
          if (
            error instanceof GraphQLError &&
            /^Syntax Error: Document contains more that \d+ tokens\./.test(error.message)
          ) {
            throw limitError(`Token limit of ${maxTokens} exceeded.`);
          }
          throw error;
        }
      });
    },
  };
}
