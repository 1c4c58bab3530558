// GraphQL abuse limits through GraphQL Armor's Envelop plugins, on by default. Field suggestions
// ("Did you mean …?") leak the schema just as introspection does, so they go together.
import { EnvelopArmor } from "@escape.tech/graphql-armor";
import type { Plugin } from "graphql-yoga";

export const GRAPHQL_LIMITS = {
  maxDepth: 6,
  maxAliases: 10,
  maxDirectives: 10,
  maxTokens: 1000,
  maxCost: 5000,
} as const;

export function armorPlugins(introspection: boolean): Plugin[] {
  const armor = new EnvelopArmor({
    // Introspection (GraphiQL's own query) is deep by nature; it is allowed or refused as a whole.
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true },
    blockFieldSuggestion: { enabled: !introspection },
  });
  return armor.protect().plugins as Plugin[];
}
