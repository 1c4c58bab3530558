// Resolvers for schema/*.graphql: thin calls into the category service.
import { AppError } from "../errors/index.ts";
import type { Actor } from "../categories/service.ts";
import type { HubItem } from "../realtime/hub.ts";
import type { GraphQLContext } from "./context.ts";
import type { Resolvers } from "./resolvers.generated.ts";

/** Who a mutation acts as; without authentication there is nobody to hold to ownership. */
function actor(ctx: GraphQLContext): Actor {
  if (ctx.auth === "off") return "anyone";
  if (!ctx.viewer) throw new AppError("unauthorized", "Mutations need a Bearer token.");
  return { userId: ctx.viewer.id, admin: ctx.viewer.role === "admin" };
}

export const resolvers: Resolvers = {
  Query: {
    categories: (_, args, ctx) => ctx.categories.list(args),
    listAllCategories: (_, args, ctx) => ctx.categories.list(args),
    category: (_, { id }, ctx) => ctx.categories.get(id),
    categoriesConnection: (_, args, ctx) => ctx.categories.connection(args),
  },
  CategoryConnection: {
    totalCount: (connection) => connection.totalCount(),
  },
  Mutation: {
    createCategory: (_, { input }, ctx) => ctx.categories.create(input, actor(ctx)),
    updateCategory: (_, { id, input, ifVersion }, ctx) => ctx.categories.update(id, input, actor(ctx), ifVersion),
    deleteCategory: (_, { id, ifVersion }, ctx) => ctx.categories.delete(id, actor(ctx), ctx.origin, ifVersion),
  },
  Subscription: {
    categoryEvents: {
      subscribe: (_, { after }, ctx) => ctx.subscribe(after ?? null),
      // A subscription that svc ends (its token stopped being valid) ends with that error.
      resolve: (item: HubItem) => {
        if ("ending" in item) throw item.ending;
        return item;
      },
    },
  },
};
