// The svc admin console: sign in, then users, categories and the audit log, under a status strip.
// Everything it does goes through svc's own API, which enforces every rule itself.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { request, resume, signOut, whenSignedOut, type Me } from "./api.ts";
import { Audit } from "./audit.tsx";
import { Categories } from "./categories.tsx";
import { SignIn } from "./sign-in.tsx";
import { Status } from "./status.tsx";
import { Users } from "./users.tsx";

const VIEWS = { users: "Users", categories: "Categories", audit: "Audit log" } as const;
type View = keyof typeof VIEWS;

const viewOf = (hash: string): View => {
  const name = hash.replace(/^#\/?/, "");
  return name in VIEWS ? (name as View) : "users";
};

function Console() {
  const [me, setMe] = useState<Me | null | "resuming">("resuming");
  const [view, setView] = useState<View>(viewOf(location.hash));
  const [names, setNames] = useState(new Map<string, string>());

  useEffect(() => {
    whenSignedOut(() => setMe(null));
    void resume().then(setMe, () => setMe(null));
    const follow = () => setView(viewOf(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  useEffect(() => {
    if (!me || me === "resuming" || view === "users") return;
    // Names for the ids in the log and of categories' creators; accounts past the first thousand show as ids.
    void request<Array<{ id: string; username: string }>>("GET", "/admin/users?limit=1000").then(
      (answer) => setNames(new Map(answer.body.map((u) => [u.id, u.username]))),
      () => {},
    );
  }, [me, view]);

  if (me === "resuming") return <p class="muted">Loading…</p>;
  if (!me) return <SignIn onSignedIn={setMe} />;
  return (
    <>
      <header>
        <h1>svc admin</h1>
        <nav aria-label="Console">
          {(Object.keys(VIEWS) as View[]).map((name) => (
            <a key={name} href={`#/${name}`} aria-current={view === name ? "page" : undefined}>
              {VIEWS[name]}
            </a>
          ))}
        </nav>
        <span class="who">
          {me.username}{" "}
          <button
            type="button"
            onClick={async () => {
              await signOut();
              setMe(null);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <Status />
      <main>
        {view === "users" && <Users me={me} />}
        {view === "categories" && <Categories names={names} />}
        {view === "audit" && <Audit names={names} />}
      </main>
    </>
  );
}

render(<Console />, document.getElementById("console")!);
