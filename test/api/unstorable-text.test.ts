// U+0000 and lone UTF-16 surrogates are refused in every field, REST and GraphQL, on every database:
// PostgreSQL cannot store U+0000, and a lone surrogate has no UTF-8 form (two different ones would be
// stored, and hashed, alike).
import { describe, expect, test } from "bun:test";
import { expectProblem, testApp } from "../helpers.ts";

const BAD = [
  ["U+0000", "ann\u0000x"],
  ["a lone high surrogate", "ann\ud800x"],
  ["a lone low surrogate", "ann\udc00x"],
] as const;

const GOOD_PASSWORD = "correct horse battery";

describe.each(BAD)("%s", (_, bad) => {
  const ann = { username: "ann", email: "ann@example.com", password: GOOD_PASSWORD };

  test.each([
    ["POST", "/svc-api/v1/users/create", { ...ann, username: bad }, "username"],
    ["POST", "/svc-api/v1/users/create", { ...ann, email: `${bad}@example.com` }, "email"],
    ["POST", "/svc-api/v1/users/create", { ...ann, password: `${bad}${GOOD_PASSWORD}` }, "password"],
    ["POST", "/svc-api/v1/auth/login", { username: bad, password: GOOD_PASSWORD }, "username"],
    ["POST", "/svc-api/v1/auth/login", { username: "ann@example.com", password: `${GOOD_PASSWORD}${bad}` }, "password"],
    ["PUT", "/svc-api/v1/users/", { username: bad }, "username"],
    ["PUT", "/svc-api/v1/users/", { email: `${bad}@example.com`, current_password: GOOD_PASSWORD }, "email"],
    [
      "PUT",
      "/svc-api/v1/users/",
      { email: "new@example.com", current_password: `${GOOD_PASSWORD}${bad}` },
      "current_password",
    ],
    [
      "PUT",
      "/svc-api/v1/users/password",
      { current_password: GOOD_PASSWORD, new_password: `${bad}${GOOD_PASSWORD}` },
      "new_password",
    ],
  ])("%s %s: 400 validation_failed naming it, nothing changed", async (method, path, body, field) => {
    const { call, signUp, store } = await testApp();
    const { token, user } = await signUp("ann", GOOD_PASSWORD);
    const before = await store.users.findById(user.id);
    const reply = await call(method, path, { body, token });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors).toEqual([{ field, message: "must not contain U+0000 or an unpaired UTF-16 surrogate" }]);
    expect(await store.users.findById(user.id)).toEqual(before);
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    expect((await call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
  });

  test.each([
    ["createCategory", "name"],
    ["createCategory", "description"],
    ["createCategory", "icon"],
    ["updateCategory", "name"],
    ["updateCategory", "description"],
  ])("GraphQL %s with it in %s: BAD_USER_INPUT naming the field, nothing changed", async (mutation, field) => {
    const { graphql, signUp, store } = await testApp();
    const { token } = await signUp();
    const created = await graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    const id = created.body.data.createCategory.id;
    const before = await store.categories.list();
    const input = { ...(mutation === "createCategory" && { name: "Films" }), [field]: bad };
    const reply =
      mutation === "createCategory"
        ? await graphql("mutation ($input: CreateCategoryInput!) { createCategory(input: $input) { id } }", {
            token,
            variables: { input },
          })
        : await graphql(
            "mutation ($id: ID!, $input: UpdateCategoryInput!) { updateCategory(id: $id, input: $input) { id } }",
            { token, variables: { id, input } },
          );
    expect(reply.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect(await store.categories.list()).toEqual(before);
  });
});

describe("the same refusals in other spellings", () => {
  test("two different lone surrogates are two passwords, so neither is accepted", async () => {
    const { call } = await testApp();
    for (const surrogate of ["\ud800", "\udbff"]) {
      const reply = await call("POST", "/svc-api/v1/users/create", {
        body: { username: "ann", email: "ann@example.com", password: `${GOOD_PASSWORD}${surrogate}` },
      });
      expectProblem(reply, 400, "validation_failed");
    }
  });

  test("an escaped U+0000 in an inline GraphQL literal: BAD_USER_INPUT naming the field", async () => {
    const { graphql, signUp, store } = await testApp();
    const { token } = await signUp();
    const reply = await graphql('mutation { createCategory(input: { name: "Bo\\u0000oks" }) { id } }', { token });
    expect(reply.body.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "name" });
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
  });

  test("surrogate pairs (emoji) are text like any other", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp("ann", GOOD_PASSWORD);
    const reply = await call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: GOOD_PASSWORD, new_password: "😀 correct horse 😀" },
    });
    expect(reply.status).toBe(200);
  });
});
