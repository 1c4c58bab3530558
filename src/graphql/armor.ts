// GraphQL abuse limits through GraphQL Armor's Envelop plugins, on by default. Field suggestions
// ("Did you mean …?") leak the schema just as introspection does, so they go together.
import { EnvelopArmor } from "@escape.tech/graphql-armor";
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

export function armorPlugins(introspection: boolean): Plugin[] {
  const armor = new EnvelopArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: false, flattenFragments: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true },
    blockFieldSuggestion: { enabled: !introspection },
  });
  return armor.protect().plugins as Plugin[];
}
