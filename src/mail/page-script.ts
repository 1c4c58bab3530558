// The script of the account pages (pages.ts), as text: it runs in the browser, so it is plain JavaScript
// that reads the token from the fragment, takes it out of the address bar and history at once, and POSTs
// it to svc's API beside the page. It holds no token of its own: the page is the same for every link.
export const PAGE_SCRIPT = `"use strict";
(() => {
  const page = document.body.dataset.page;
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  // Out of the address bar and the history at once: a copied address, a bookmark or the next visitor of
  // this browser never sees it.
  history.replaceState(null, "", location.pathname + location.search);
  const api = location.pathname.replace(/\\/svc\\/account\\/[^/]*$/, "") + "/svc-api/v1";
  const outcome = document.getElementById("outcome");
  const form = document.getElementById("form");
  const say = (text, ok) => {
    outcome.textContent = text;
    outcome.className = ok ? "ok" : "bad";
  };
  const post = async (path, body) => {
    const response = await fetch(api + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    let data = null;
    try {
      data = await response.json();
    } catch {}
    return { status: response.status, data: data || {} };
  };
  const problem = ({ status, data }) => {
    if (data.code === "mail_token_expired") return "This link has expired. Ask for a new one.";
    if (data.code === "invalid_mail_token") return "This link does not work any more (used, or replaced by a newer one). Ask for a new one.";
    if (data.code === "email_taken") return "Another account took this address meanwhile; nothing was changed.";
    if (data.code === "too_many_requests") return "Too many attempts; wait a little and try again.";
    if (Array.isArray(data.errors) && data.errors.length > 0) return data.errors.map((e) => e.field + " " + e.message).join("; ");
    return data.detail || "Something went wrong (" + status + "). Try again later.";
  };
  if (!token) {
    say("This page needs the whole link from your mail. Open the link again.", false);
    return;
  }
  const run = async (button, work) => {
    button.disabled = true;
    say("Working…", true);
    try {
      await work();
    } catch {
      say("svc could not be reached. Try again.", false);
    } finally {
      button.disabled = false;
    }
  };
  form.hidden = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    if (page === "reset-password") {
      const password = form.elements.namedItem("password").value;
      if (password !== form.elements.namedItem("again").value) return say("The two passwords differ.", false);
      return run(button, async () => {
        const reply = await post("/auth/password-reset", { token, new_password: password });
        if (reply.status !== 200) return say(problem(reply), false);
        form.hidden = true;
        say("Your password is changed, and every session signed out. Sign in with the new password.", true);
      });
    }
    const path = page === "verify-email" ? "/auth/email/verify" : "/auth/email/confirm-change";
    return run(button, async () => {
      const reply = await post(path, { token });
      if (reply.status !== 200) return say(problem(reply), false);
      form.hidden = true;
      say(page === "verify-email" ? "Your address is confirmed." : "Your address is now " + reply.data.email + ".", true);
    });
  });
})();
`;

export const PAGE_STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1e293b}
h1{font-size:1.4rem}label{display:block;margin:.75rem 0}input{display:block;width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.ok{color:#166534}.bad{color:#b91c1c}
`;
