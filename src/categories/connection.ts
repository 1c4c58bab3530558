// Categories as a Relay connection: the arguments a client gives (first/after forwards, last/before
// backwards, a search, an order) checked and turned into a range of the store's, and the page read from it
// with its edges' cursors, what lies on either side of it, and the total, counted only when asked for.
import type {
  CategoryOrder,
  CategoryOrderField,
  CategoryPosition,
  CategoryRecord,
  CategoryStore,
} from "../db/store.ts";
import { invalidFields, type FieldError } from "../errors/index.ts";
import { unstorable, UNSTORABLE_MESSAGE } from "../lib/text.ts";
import { cursorOf, positionOf } from "./cursors.ts";

export const CONNECTION_PAGE_DEFAULT = 100;
export const CONNECTION_PAGE_MAX = 1000;
const SEARCH_MAX = 64;

/** The arguments as GraphQL gives them (schema/categories.graphql, categoriesConnection). */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  search?: string | null;
  orderBy?: { field: "NAME" | "CREATED_AT" | "UPDATED_AT"; direction?: "ASC" | "DESC" | null } | null;
}

export interface CategoryEdgeModel {
  cursor: string;
  node: CategoryRecord;
}

export interface CategoryConnectionModel {
  edges: CategoryEdgeModel[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  /** Counted when a client asks for it (a count is a query of its own). */
  totalCount: () => Promise<number>;
}

const FIELDS: Record<NonNullable<ConnectionArgs["orderBy"]>["field"], CategoryOrderField> = {
  NAME: "name",
  CREATED_AT: "createdAt",
  UPDATED_AT: "updatedAt",
};

/** What the arguments ask for: `size` categories from the start of the range, or with `fromEnd` from its end. */
interface PageRequest {
  order: CategoryOrder;
  search: string | undefined;
  after?: CategoryPosition;
  before?: CategoryPosition;
  size: number;
  fromEnd: boolean;
}

/** The page the arguments ask for, as a connection. Throws BAD_USER_INPUT naming every argument that is wrong. */
export async function categoryConnection(store: CategoryStore, args: ConnectionArgs): Promise<CategoryConnectionModel> {
  const request = pageRequest(args);
  const { order, search, after, before, size, fromEnd } = request;
  // One category more than the page tells whether more lie beyond it, that way.
  const rows = await store.range({ order, search, after, before, limit: size + 1, fromEnd });
  const beyond = rows.length > size;
  const page = !beyond ? rows : fromEnd ? rows.slice(1) : rows.slice(0, size);
  /** Whether any category lies before (or after) the place, as the page's own range reads them. */
  const anyBeside = async (side: "after" | "before", place: CategoryPosition) =>
    (await store.range({ order, search, [side]: place, limit: 1, fromEnd: side === "before" })).length > 0;
  const placeOf = (category: CategoryRecord) => ({ value: category[order.field], id: category.id });
  // Forwards, what lies before the page is known only from `after`; backwards, what follows it from `before`.
  const start = page[0] ? placeOf(page[0]) : after;
  const end = page.at(-1) ? placeOf(page.at(-1)!) : before;
  const hasPreviousPage = fromEnd ? beyond : after !== undefined && (await anyBeside("before", start!));
  const hasNextPage = fromEnd ? before !== undefined && (await anyBeside("after", end!)) : beyond;
  const edges = page.map((node) => ({ cursor: cursorOf(order, node), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: () => store.count(search),
  };
}

/** The arguments checked: every problem with them at once, then the cursors (read in the order asked for). */
function pageRequest({ first, after, last, before, search, orderBy }: ConnectionArgs): PageRequest {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  for (const [field, size] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (size !== undefined && size !== null && !(Number.isInteger(size) && size >= 1 && size <= CONNECTION_PAGE_MAX))
      problem(field, `must be an integer from 1 to ${CONNECTION_PAGE_MAX}`);
  }
  if (first != null && last != null) problem("last", "cannot be given with first: page forwards or backwards");
  if (after != null && before != null) problem("before", "cannot be given with after: page from one cursor");
  if (search != null && unstorable(search)) problem("search", UNSTORABLE_MESSAGE);
  else if (search != null && [...search].length > SEARCH_MAX)
    problem("search", `must be at most ${SEARCH_MAX} characters`);
  if (problems.length > 0) throw invalidFields(problems);

  const order = { field: FIELDS[orderBy?.field ?? "NAME"], descending: orderBy?.direction === "DESC" };
  // Neither first nor last: the default page, next to the one cursor given.
  const fromEnd = last != null || (first == null && before != null && after == null);
  return {
    order,
    search: search ?? undefined,
    ...(after != null && { after: positionOf(after, order, "after") }),
    ...(before != null && { before: positionOf(before, order, "before") }),
    size: (fromEnd ? last : first) ?? CONNECTION_PAGE_DEFAULT,
    fromEnd,
  };
}
