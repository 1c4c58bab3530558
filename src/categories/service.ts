// What can be done with categories, in domain terms. Called by the GraphQL resolvers.
import { auditEvent, type Origin } from "../audit/model.ts";
import { unauthorized } from "../auth/authenticator.ts";
import {
  ReferenceGone,
  StaleVersion,
  type CategoryPage,
  type CategoryRecord,
  type CategoryStore,
} from "../db/store.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { newId, parseId } from "../lib/ids.ts";
import { categoryConnection, type ConnectionArgs } from "./connection.ts";
import { cleanCategory, DEFAULT_COLOR, type CategoryInput } from "./model.ts";

/** Who acts: a user (an administrator may change any category), or anyone at all when GraphQL authentication is off. */
export type Actor = { userId: string; admin: boolean } | "anyone";

export type CategoryService = ReturnType<typeof createCategoryService>;

/** `first` and `after` as a client gives them (GraphQL arguments). */
export interface ListArgs {
  first?: number | null;
  after?: string | null;
}

export const LIST_FIRST_MAX = 1000;

export function createCategoryService(categories: CategoryStore) {
  /** The page the arguments ask for, or BAD_USER_INPUT naming the wrong one. */
  async function pageOf({ first, after }: ListArgs): Promise<CategoryPage> {
    if (first !== undefined && first !== null && !(Number.isInteger(first) && first >= 1 && first <= LIST_FIRST_MAX)) {
      throw invalidFields([{ field: "first", message: `must be an integer from 1 to ${LIST_FIRST_MAX}` }]);
    }
    if (after === undefined || after === null) return { first };
    const anchor = await find(after);
    if (!anchor)
      throw invalidFields([
        { field: "after", message: "must be the id of a category (the last one of the previous page)" },
      ]);
    return { first, after: { id: anchor.id, name: anchor.name } };
  }

  async function find(id: string): Promise<CategoryRecord | null> {
    const canonical = parseId(id);
    return canonical ? categories.findById(canonical) : null;
  }

  /** `ifVersion` as given, when it is one a category can have. */
  function versionOf(ifVersion: number | null | undefined): number | undefined {
    if (ifVersion === undefined || ifVersion === null) return undefined;
    if (!Number.isInteger(ifVersion) || ifVersion < 1)
      throw invalidFields([{ field: "ifVersion", message: "must be a category's version: an integer from 1" }]);
    return ifVersion;
  }

  /** The conflict a stale `ifVersion` is answered with, naming the version to read again. */
  function conflict(current: number): AppError {
    return new AppError(
      "version_mismatch",
      `The category changed since you read it: it is at version ${current}. Read it again and retry.`,
      { facts: { currentVersion: current } },
    );
  }

  /** The store's answer, with a stale version made the client's conflict. */
  async function conditional<T>(change: Promise<T>): Promise<T> {
    try {
      return await change;
    } catch (error) {
      if (error instanceof StaleVersion) throw conflict(error.current);
      throw error;
    }
  }

  /** The category, if the actor may change it. */
  async function editable(id: string, actor: Actor): Promise<CategoryRecord> {
    const category = await find(id);
    if (!category) throw new AppError("not_found", "No category has this id.");
    if (actor !== "anyone" && !actor.admin && category.createdBy !== actor.userId) {
      throw new AppError("forbidden", "Only the category's creator, or an administrator, may change it.");
    }
    return category;
  }

  return {
    async list(args: ListArgs = {}): Promise<CategoryRecord[]> {
      if ((args.first ?? null) === null && (args.after ?? null) === null) return categories.list();
      return categories.list(await pageOf(args));
    },
    get: find,
    /** A Relay connection's page (connection.ts): forwards or backwards, searched, in the order asked for. */
    connection: (args: ConnectionArgs) => categoryConnection(categories, args),

    async create(input: CategoryInput & { name: string }, actor: Actor): Promise<CategoryRecord> {
      const { fields, problems } = cleanCategory(input);
      if (problems.length > 0) throw invalidFields(problems);
      try {
        return await categories.create({
          id: newId(),
          name: fields.name!,
          description: fields.description ?? null,
          colorHex: fields.colorHex ?? DEFAULT_COLOR,
          icon: fields.icon ?? null,
          createdBy: actor === "anyone" ? null : actor.userId,
          createdAt: new Date().toISOString(),
        });
      } catch (error) {
        // The creator's account was deleted after its token was checked: as if the token were revoked.
        if (error instanceof ReferenceGone)
          throw unauthorized(true, "Your account was deleted while this request ran.");
        throw error;
      }
    },

    async update(id: string, input: CategoryInput, actor: Actor, ifVersion?: number | null): Promise<CategoryRecord> {
      const { fields, problems } = cleanCategory(input);
      const expected = versionOf(ifVersion);
      const category = await editable(id, actor);
      if (problems.length > 0) throw invalidFields(problems);
      if (Object.keys(fields).length === 0) {
        // Nothing to write, but the client still learns that its version is stale.
        if (expected !== undefined && expected !== category.version) throw conflict(category.version);
        return category;
      }
      const updated = await conditional(categories.update(category.id, fields, new Date().toISOString(), expected));
      if (!updated) throw new AppError("not_found", "No category has this id.");
      return updated;
    },

    async delete(id: string, actor: Actor, origin: Origin, ifVersion?: number | null): Promise<boolean> {
      const expected = versionOf(ifVersion);
      const category = await editable(id, actor);
      const event = auditEvent("category.deleted", {
        actor: actor === "anyone" ? null : actor.userId,
        target: category.id,
        origin,
        detail: { name: category.name, created_by: category.createdBy },
      });
      if (!(await conditional(categories.delete(category.id, event, expected))))
        throw new AppError("not_found", "No category has this id.");
      return true;
    },
  };
}
