// What can be done with categories, in domain terms. Called by the GraphQL resolvers.
import type { CategoryRecord, CategoryStore, TableVersions } from "../db/store.ts";
import { VersionedCache } from "../db/versioned-cache.ts";
import { AppError, invalidFields } from "../errors.ts";
import { newId, parseId } from "../ids.ts";
import { cleanCategory, DEFAULT_COLOR, type CategoryInput } from "./model.ts";

/** Who acts: a user, or anyone at all when GraphQL authentication is off. */
export type Actor = { userId: string } | "anyone";

export type CategoryService = ReturnType<typeof createCategoryService>;

export function createCategoryService(categories: CategoryStore, versions: () => Promise<TableVersions>) {
  // The whole list is one entry: every instance answers from memory until a write anywhere changes it.
  const lists = new VersionedCache<CategoryRecord[]>(1);

  async function find(id: string): Promise<CategoryRecord | null> {
    const canonical = parseId(id);
    return canonical ? categories.findById(canonical) : null;
  }

  /** The category, if the actor may change it. */
  async function editable(id: string, actor: Actor): Promise<CategoryRecord> {
    const category = await find(id);
    if (!category) throw new AppError("not_found", "No category has this id.");
    if (actor !== "anyone" && category.createdBy !== actor.userId) {
      throw new AppError("forbidden", "Only the category's creator may change it.");
    }
    return category;
  }

  return {
    list: async () => lists.get("all", (await versions()).categories, () => categories.list()),
    get: find,

    async create(input: CategoryInput & { name: string }, actor: Actor): Promise<CategoryRecord> {
      const { fields, problems } = cleanCategory(input);
      if (problems.length > 0) throw invalidFields(problems);
      return categories.create({
        id: newId(),
        name: fields.name!,
        description: fields.description ?? null,
        colorHex: fields.colorHex ?? DEFAULT_COLOR,
        icon: fields.icon ?? null,
        createdBy: actor === "anyone" ? null : actor.userId,
        createdAt: new Date().toISOString(),
      });
    },

    async update(id: string, input: CategoryInput, actor: Actor): Promise<CategoryRecord> {
      const { fields, problems } = cleanCategory(input);
      const category = await editable(id, actor);
      if (problems.length > 0) throw invalidFields(problems);
      if (Object.keys(fields).length === 0) return category;
      const updated = await categories.update(category.id, fields, new Date().toISOString());
      if (!updated) throw new AppError("not_found", "No category has this id.");
      return updated;
    },

    async delete(id: string, actor: Actor): Promise<boolean> {
      const category = await editable(id, actor);
      if (!(await categories.delete(category.id))) throw new AppError("not_found", "No category has this id.");
      return true;
    },
  };
}
