// Categories, through GraphQL as any client reaches them: the list with colour swatches and icons,
// kept current by the client's categoryEvents subscription (live.ts), and create, edit and delete (an
// administrator may change any category).
import { useEffect, useRef, useState } from "preact/hooks";
import { graphql } from "./api.ts";
import { applied, type Category } from "./category-list.ts";
import { followCategoryEvents, type CategoryEvent } from "./live.ts";
import type { Names } from "./names.ts";
import { submitted, TextField } from "./forms.tsx";
import { Outcome } from "./outcome.tsx";
import { ConfirmButton, useAction } from "./parts.tsx";

type Draft = { name: string; description: string; colorHex: string; icon: string };

const FIELDS = "id name description colorHex icon createdBy version";
const LIST = `{ categories { ${FIELDS} } }`;
const EMPTY: Draft = { name: "", description: "", colorHex: "#64748B", icon: "" };

/** The draft as the API's input: empty description and icon are none. */
const input = (draft: Draft) => ({
  name: draft.name,
  description: draft.description || null,
  colorHex: draft.colorHex,
  icon: draft.icon || null,
});

function CategoryForm({
  initial,
  submit,
  label,
  onCancel,
}: {
  initial: Draft;
  submit: (draft: Draft) => Promise<boolean>;
  label: string;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const set = (field: keyof Draft) => (value: string) => setDraft({ ...draft, [field]: value });
  return (
    <form
      class="category-form"
      aria-label={label}
      onSubmit={submitted(async () => {
        if ((await submit(draft)) && !onCancel) setDraft(EMPTY);
      })}
    >
      <TextField label="Name" name="name" required maxLength={64} value={draft.name} set={set("name")} />
      <TextField
        label="Description"
        name="description"
        maxLength={500}
        value={draft.description}
        set={set("description")}
      />
      <TextField label="Colour" name="colorHex" type="color" value={draft.colorHex} set={set("colorHex")} />
      <TextField
        label="Icon"
        name="icon"
        maxLength={64}
        pattern="[A-Za-z0-9_:.\-]+"
        value={draft.icon}
        set={set("icon")}
      />
      <button type="submit">{label}</button>
      {onCancel && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
    </form>
  );
}

/** The category being edited, and the version its form was filled from: a save changes that version or none. */
interface Editing {
  id: string;
  version: number;
}

export function Categories({ names }: { names: Names }) {
  const [rows, setRows] = useState<Category[]>([]);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [done, setDone] = useState("");
  /** Whether the list has been read: until then, no "No categories yet". */
  const [read, setRead] = useState(false);
  const action = useAction();
  /** Reads the list afresh; resolves to it as shown (null when reading failed). */
  const reload = useRef<() => Promise<Category[] | null>>(async () => null);

  useEffect(() => {
    // The changes that arrived while the list was being read: applied again to the list read.
    let arrived: CategoryEvent[] | null = null;
    let reading = 0;
    reload.current = async () => {
      const mine = ++reading;
      arrived = [];
      try {
        const { categories } = await graphql<{ categories: Category[] }>(LIST);
        if (mine !== reading) return null;
        const list = arrived.reduce(applied, categories);
        setRows(list);
        setRead(true);
        return list;
      } finally {
        if (mine === reading) arrived = null;
      }
    };
    return followCategoryEvents({
      reload: () => void action.run(reload.current),
      change: (event) => {
        arrived?.push(event);
        setRows((shown) => applied(shown, event));
      },
    });
  }, []);
  useEffect(() => names.want(rows.map((category) => category.createdBy)), [rows, names]);

  async function act(what: string, work: () => Promise<unknown>): Promise<boolean> {
    setDone("");
    const ok = await action.run(work);
    if (ok) {
      setDone(what);
      setEditing(null);
    } else {
      // Read the list again quietly (the error stays shown): after a conflict, what is there now, and an
      // edit under way is from now on based on it.
      const list = await reload.current().catch(() => null);
      setEditing((now) => {
        const row = now && list?.find((category) => category.id === now.id);
        return now && row ? { id: now.id, version: row.version } : now;
      });
    }
    return ok;
  }

  return (
    <section aria-labelledby="categories-title">
      <h2 id="categories-title">Categories</h2>
      <CategoryForm
        label="Create category"
        initial={EMPTY}
        submit={(draft) =>
          act(`${draft.name} created`, () =>
            graphql(`mutation ($input: CreateCategoryInput!) { createCategory(input: $input) { id } }`, {
              input: input(draft),
            }),
          )
        }
      />
      <Outcome error={action.error} done={done} />
      <ul class="categories">
        {rows.map((category) => (
          <li key={category.id} data-category={category.name}>
            {editing?.id === category.id ? (
              <CategoryForm
                label={`Save ${category.name}`}
                initial={{
                  name: category.name,
                  description: category.description ?? "",
                  colorHex: category.colorHex,
                  icon: category.icon ?? "",
                }}
                onCancel={() => setEditing(null)}
                submit={(draft) =>
                  act(`${draft.name} saved`, () =>
                    graphql(
                      // ifVersion: another administrator's edit since this list was read is not overwritten.
                      `mutation ($id: ID!, $input: UpdateCategoryInput!, $v: Int) { updateCategory(id: $id, input: $input, ifVersion: $v) { id } }`,
                      { id: category.id, input: input(draft), v: editing.version },
                    ),
                  )
                }
              />
            ) : (
              <>
                <span class="swatch" style={{ background: category.colorHex }} aria-hidden="true">
                  {category.icon ? category.icon.slice(0, 1).toUpperCase() : ""}
                </span>
                <span class="category">
                  <strong>{category.name}</strong>
                  {category.icon && <span class="icon-name">{category.icon}</span>}
                  <span class="muted">{category.colorHex}</span>
                  {category.description && <span>{category.description}</span>}
                  <span class="muted">{category.createdBy ? `by ${names.of(category.createdBy)}` : "no creator"}</span>
                </span>
                <span class="actions">
                  <button
                    type="button"
                    onClick={() => setEditing({ id: category.id, version: category.version })}
                    aria-label={`Edit ${category.name}`}
                  >
                    Edit
                  </button>
                  <ConfirmButton
                    label="Delete"
                    question={`Delete ${category.name}?`}
                    onConfirm={() =>
                      void act(`${category.name} deleted`, () =>
                        graphql(`mutation ($id: ID!, $v: Int) { deleteCategory(id: $id, ifVersion: $v) }`, {
                          id: category.id,
                          v: category.version,
                        }),
                      )
                    }
                  />
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
      {read && rows.length === 0 && !action.busy && <p class="muted">No categories yet.</p>}
    </section>
  );
}
