// The svc admin console: sign in, then users, invitations, categories, the audit log, the mail outbox,
// backups and your own account (its second factors), under a status strip.
// Everything it does goes through svc's own API, which enforces every rule itself.
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { resume, signOut, takeArrivedSecondStep, whenSessionChanges, type Me } from "./api.ts";
import { Account } from "./account.tsx";
import { Audit } from "./audit.tsx";
import { Categories } from "./categories.tsx";
import { BackupsView } from "./backups.tsx";
import { Invitations } from "./invitations.tsx";
import { MailView } from "./mail.tsx";
import { names } from "./names.ts";
import { ErrorNote, useAction } from "./parts.tsx";
import { SignIn } from "./sign-in.tsx";
import { Status } from "./status.tsx";
import { Users } from "./users.tsx";

const VIEWS = {
  users: "Users",
  invitations: "Invitations",
  categories: "Categories",
  audit: "Audit log",
  mail: "Mail",
  backups: "Backups",
  account: "Account",
} as const;
type View = keyof typeof VIEWS;

const viewOf = (hash: string): View => {
  const name = hash.replace(/^#\/?/, "");
  return name in VIEWS ? (name as View) : "users";
};

function Console() {
  const [me, setMe] = useState<Me | null | "resuming">("resuming");
  const [view, setView] = useState<View>(viewOf(location.hash));
  const leaving = useAction();
  // Names are asked for afresh on each visit to a view, so a renamed account shows its new name.
  const [, setNamesArrived] = useState(0);
  const book = useMemo(() => names(() => setNamesArrived((n) => n + 1)), [me, view]);

  useEffect(() => {
    whenSessionChanges(setMe);
    void resume().then(setMe, () => setMe(null));
    const follow = () => setView(viewOf(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);

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
            disabled={leaving.busy}
            onClick={() =>
              void leaving.run(async () => {
                await signOut();
                setMe(null);
              })
            }
          >
            Sign out
          </button>
        </span>
      </header>
      <ErrorNote error={leaving.error} />
      <Status />
      <main>
        {view === "users" && <Users me={me} />}
        {view === "invitations" && <Invitations names={book} />}
        {view === "categories" && <Categories names={book} />}
        {view === "audit" && <Audit names={book} />}
        {view === "mail" && <MailView />}
        {view === "backups" && <BackupsView />}
        {view === "account" && <Account me={me} />}
      </main>
    </>
  );
}

// Before the views read the fragment: a provider's sign-in may have left its second step there.
takeArrivedSecondStep();
render(<Console />, document.getElementById("console")!);
